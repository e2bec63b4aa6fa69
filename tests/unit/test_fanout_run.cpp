// The fan-out executor without a database: outcomes per target, parallelism capped, and a
// failure stopping new starts only when the policy asks.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "fanout/fanout.hpp"

using namespace shardctl;
using namespace shardctl::fanout;

namespace {
std::vector<Target> targets(int n) {
  std::vector<Target> out;
  for (int i = 0; i < n; ++i) {
    std::string name = "s";
    name += std::to_string(i);
    std::string dsn = "dbname=";
    dsn += name;
    out.push_back({name, dsn, catalog::ShardStatus::online});
  }
  return out;
}
}  // namespace

TEST_CASE("every target gets its own outcome, in target order, whatever fails") {
  auto t = targets(6);
  auto out = run(t, {3, false}, [](const Target& x) {
    if (x.shard == "s1") throw unavailable_error("shard s1 is unreachable");
    if (x.shard == "s4") throw data_error("relation \"t\" already exists\nLINE 1: ...");
    if (x.shard == "s5") throw std::runtime_error("boom");
  });
  REQUIRE(out.size() == 6);
  CHECK(out[0].state == State::ok);
  CHECK(out[1].state == State::unreachable);
  CHECK(out[1].kind == ErrorKind::unavailable);
  CHECK(out[4].state == State::failed);
  CHECK(out[4].error == "relation \"t\" already exists");  // one line
  CHECK(out[5].kind == ErrorKind::internal);
  for (std::size_t i = 0; i < t.size(); ++i) CHECK(out[i].shard == t[i].shard);
}

TEST_CASE("no more than `parallel` targets run at once") {
  std::atomic<int> running{0}, peak{0};
  auto out = run(targets(12), {4, false}, [&](const Target&) {
    int now = ++running;
    int p = peak.load();
    while (now > p && !peak.compare_exchange_weak(p, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
  });
  CHECK(peak.load() <= 4);
  CHECK(peak.load() >= 2);
  for (const auto& o : out) CHECK(o.ok());
}

TEST_CASE("stop_on_failure: no new target starts after a failure; the rest are skipped") {
  std::atomic<int> started{0};
  std::vector<std::string> done;
  auto out = run(targets(5), {1, true},
                 [&](const Target& x) {
                   ++started;
                   if (x.shard == "s1") throw data_error("fails here");
                 },
                 [&](const Target& x, const Outcome&) { done.push_back(x.shard); });
  CHECK(started.load() == 2);
  CHECK(out[0].state == State::ok);
  CHECK(out[1].state == State::failed);
  for (int i = 2; i < 5; ++i) CHECK(out[i].state == State::skipped);
  CHECK(done.size() == 5);  // on_done hears of skipped targets too
}

TEST_CASE("split_shard_list trims names and refuses empty ones") {
  CHECK(split_shard_list("a, b ,c") == std::vector<std::string>{"a", "b", "c"});
  CHECK_THROWS_AS(split_shard_list("a,,b"), Error);
  CHECK_THROWS_AS(split_shard_list(""), Error);
}

TEST_CASE("dsn_with_timeout sets the connect timeout last, so it wins") {
  auto d = dsn_with_timeout("host=/tmp port=6400 dbname=x connect_timeout=30", 3);
  CHECK(d.size() > std::string("connect_timeout=3").size());
  CHECK(d.substr(d.size() - std::string(" connect_timeout=3").size()) == " connect_timeout=3");
}

TEST_CASE("each shard's outcome has the word reports and JSON have always shown") {
  CHECK(to_text(State::ok) == "ok");
  CHECK(to_text(State::failed) == "failed");
  CHECK(to_text(State::unreachable) == "unreachable");
  CHECK(to_text(State::skipped) == "skipped");
}
