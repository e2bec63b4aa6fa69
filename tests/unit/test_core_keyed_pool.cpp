// KeyedPool (lib/core/keyed_pool.hpp): the accounting of shardio::ServerPool, the per-server
// bound of every fan-out's connections, with stand-in resources instead of connections.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/keyed_pool.hpp"

using shardctl::KeyedPool;

namespace {

// A stand-in connection: which database it is "connected" to, and whether it is still good.
// `alive` counts the ones not destroyed yet (closing ones too), `most` the most at once.
struct Fake {
  std::string item;
  bool good = true;
  std::atomic<int>* alive;
  Fake(std::string i, std::atomic<int>* a, std::atomic<int>* most) : item(std::move(i)), alive(a) {
    int now = ++*alive;
    for (int seen = most->load(); now > seen && !most->compare_exchange_weak(seen, now);) {
    }
  }
  ~Fake() { --*alive; }
};

struct Opener {
  std::atomic<int> alive{0};
  std::atomic<int> most{0};
  std::atomic<int> opened{0};
  KeyedPool<Fake>::Open open(const std::string& item) {
    return [this, item] {
      ++opened;
      return std::make_unique<Fake>(item, &alive, &most);
    };
  }
};

}  // namespace

TEST_CASE("an idle resource of the same item is handed on; another item's is closed to make room") {
  Opener o;
  KeyedPool<Fake> pool(3, [](const Fake& f) { return f.good; });
  {
    auto a = pool.acquire("s1", "db1", o.open("db1"));
    CHECK(a.fresh());
    CHECK(a->item == "db1");
  }
  CHECK(pool.counts("s1").open == 1);
  CHECK(pool.counts("s1").idle == 1);
  {
    auto again = pool.acquire("s1", "db1", o.open("db1"));
    CHECK_FALSE(again.fresh());  // the idle one, not a new one
    CHECK(o.opened == 1);
    auto b = pool.acquire("s1", "db2", o.open("db2"));
    auto c = pool.acquire("s1", "db3", o.open("db3"));
    CHECK(pool.counts("s1").open == 3);
  }
  // Given back to a full group, the idle ones given back longest ago close until one slot is
  // free even while the last of them is closing: two of three go.
  pool.settle();
  auto counts = pool.counts("s1");
  CHECK(counts.open == 1);
  CHECK(counts.idle == 1);
  CHECK(counts.evicted == 2);
  CHECK(counts.peak == 3);
  CHECK(o.alive == 1);
  // Groups are counted apart.
  auto d = pool.acquire("s2", "db1", o.open("db1"));
  CHECK(pool.counts("s2").open == 1);
  CHECK(pool.counts("s1").open == 1);
}

TEST_CASE("a full group of idle resources makes room for another item by closing one, and waits for it") {
  Opener o;
  KeyedPool<Fake> pool(2, [](const Fake& f) { return f.good; });
  auto a = pool.acquire("s", "db1", o.open("db1"));
  auto b = pool.acquire("s", "db2", o.open("db2"));
  a.release();  // closed at once: with b held, keeping it would leave no slot to spare
  pool.settle();
  auto c = pool.acquire("s", "db3", o.open("db3"));  // room made by closing a
  CHECK(c->item == "db3");
  auto counts = pool.counts("s");
  CHECK(counts.open == 2);
  CHECK(counts.peak == 2);
  CHECK(o.alive == 2);
}

TEST_CASE("a discarded or unreusable resource is closed, and its slot freed") {
  Opener o;
  KeyedPool<Fake> pool(3, [](const Fake& f) { return f.good; });
  {
    auto a = pool.acquire("s", "db", o.open("db"));
    a.discard();
  }
  pool.settle();
  CHECK(pool.counts("s").open == 0);
  CHECK(o.alive == 0);
  {
    auto b = pool.acquire("s", "db", o.open("db"));
    b->good = false;
  }
  pool.settle();
  CHECK(pool.counts("s").open == 0);
  CHECK(o.alive == 0);
  {
    auto c = pool.acquire("s", "db", o.open("db"));
    c.release();  // given back early: the lease holds nothing after
    CHECK(pool.counts("s").idle == 1);
  }
  CHECK(pool.counts("s").idle == 1);
}

TEST_CASE("a group of one keeps nothing idle") {
  Opener o;
  KeyedPool<Fake> pool(1);
  { auto a = pool.acquire("s", "db", o.open("db")); }
  pool.settle();
  CHECK(pool.counts("s").open == 0);
  auto b = pool.acquire("s", "db", o.open("db"));
  CHECK(b.fresh());
}

TEST_CASE("a failed open frees its slot and propagates") {
  KeyedPool<Fake> pool(1);
  CHECK_THROWS_AS(pool.acquire("s", "db", [] () -> std::unique_ptr<Fake> { throw std::runtime_error("down"); }),
                  std::runtime_error);
  CHECK(pool.counts("s").open == 0);
  Opener o;
  auto a = pool.acquire("s", "db", o.open("db"));  // the slot is free again: no wait
  CHECK(a.fresh());
}

TEST_CASE("threads never hold more than the bound of one group, and wait instead") {
  Opener o;
  constexpr int bound = 3;
  KeyedPool<Fake> pool(bound, [](const Fake& f) { return f.good; });
  std::atomic<int> held{0}, most{0};
  std::vector<std::jthread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 25; ++k) {
        std::string item = "db" + std::to_string((t * 7 + k) % 11);  // 11 databases on one server
        auto lease = pool.acquire("server", item, o.open(item));
        CHECK(lease->item == item);
        int now = ++held;
        for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --held;
      }
    });
  threads.clear();  // joined
  pool.settle();
  auto counts = pool.counts("server");
  // A resource being closed counts until it is gone: never more alive at once than the bound.
  CHECK(o.most.load() <= bound);
  CHECK(most.load() <= bound);
  CHECK(most.load() >= 2);  // the threads did overlap
  CHECK(counts.peak <= bound);
  CHECK(counts.open <= bound);
  CHECK(o.alive.load() == counts.open);
  CHECK(counts.evicted > 0);
}

TEST_CASE("a nested acquire beside held ones goes on once the group has one slot more than the holders") {
  // check's sweeps: each thread holds its shard's connection and takes one more (a probe) for a
  // moment; with one slot more than threads per server, some thread always gets it.
  Opener o;
  constexpr int threads_n = 4;
  KeyedPool<Fake> pool(threads_n + 1, [](const Fake& f) { return f.good; });
  std::atomic<int> probes{0};
  std::vector<std::jthread> threads;
  for (int t = 0; t < threads_n; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) {
        std::string mine = "shard" + std::to_string(t * 100 + k);
        auto own = pool.acquire("server", mine, o.open(mine));
        std::string other = "shard" + std::to_string((t + 1) * 100 + k);
        auto probe = pool.acquire("server", other, o.open(other));
        ++probes;
      }
    });
  threads.clear();
  CHECK(probes == threads_n * 20);
  CHECK(pool.counts("server").peak <= threads_n + 1);
}
