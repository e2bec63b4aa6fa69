// parallel_for (lib/core/parallel.hpp): the thread pool fanout, check, archive and the read
// pool share.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/parallel.hpp"

using shardctl::parallel_for;

TEST_CASE("parallel_for runs every index once, never more than `parallel` at once") {
  for (int parallel : {0, 1, 3, 8}) {
    std::vector<std::atomic<int>> runs(40);
    std::atomic<int> running{0}, most{0};
    parallel_for(runs.size(), parallel, [&](std::size_t i) {
      int now = ++running;
      for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++runs[i];
      --running;
    });
    for (auto& r : runs) CHECK(r.load() == 1);
    CHECK(most.load() >= 1);
    CHECK(most.load() <= std::max(parallel, 1));
  }
}

TEST_CASE("parallel_for with nothing to do runs nothing") {
  int calls = 0;
  parallel_for(0, 4, [&](std::size_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("a task that throws stops no other; the lowest index's error comes back after all ran") {
  std::vector<std::atomic<int>> runs(20);
  auto run = [&] {
    parallel_for(runs.size(), 4, [&](std::size_t i) {
      ++runs[i];
      if (i == 7) throw std::runtime_error("seven");
      if (i == 3) throw std::runtime_error("three");
    });
  };
  CHECK_THROWS_WITH_AS(run(), "three", std::runtime_error);
  for (auto& r : runs) CHECK(r.load() == 1);
}

TEST_CASE("one at a time runs on the calling thread") {
  auto caller = std::this_thread::get_id();
  bool same = true;
  parallel_for(5, 1, [&](std::size_t) { same = same && std::this_thread::get_id() == caller; });
  CHECK(same);
}
