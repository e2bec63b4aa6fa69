// The planner on live bytes (every byte count it is given: shardctl-rebalance(1)): a shard weighs
// its fixed bytes plus its mappings' live bytes, so one whose tables lost most of their rows
// receives data however much disk it still takes; capacity, --max-bytes and the batch estimate
// are in the same bytes. test_rebalance_fleet_sizes.cpp checks that a snapshot gives it those.
#include <doctest/doctest.h>

#include <algorithm>

#include "planner_fleets.hpp"

using namespace planner_test;

namespace {

constexpr std::int64_t live_mib = 1 << 20;

// Three shards with 8 MiB of fixed bytes each; s1's mapping holds 48 MiB of live rows, s2's and
// s3's 6 MiB (their tables are as big as s1's on disk: the planner is never told).
Fleet live_after_purge() {
  Fleet f;
  f.maps.push_back({"m", shardctl::routing::MapKind::range, shardctl::routing::KeyType::int8});
  for (const char* n : {"s1", "s2", "s3"}) {
    f.shards.push_back(shard(n));
    f.shards.back().fixed_bytes = 8 * live_mib;
  }
  f.mappings.push_back(range_mapping("m", 0, 64000, "s1", 48 * live_mib, 64));
  f.mappings.push_back(range_mapping("m", 64000, 72000, "s2", 6 * live_mib, 8));
  f.mappings.push_back(range_mapping("m", 72000, 80000, "s3", 6 * live_mib, 8));
  return f;
}

std::int64_t live_before(const Plan& p, const std::string& shard) {
  for (const auto& b : p.shards)
    if (b.shard == shard) return b.bytes_before;
  return -1;
}

}  // namespace

TEST_CASE("shards weigh fixed plus live bytes: the emptied ones receive, fixed bytes never move") {
  auto p = plan(live_after_purge(), {});
  REQUIRE_FALSE(p.steps.empty());
  CHECK(live_before(p, "s1") == 56 * live_mib);
  CHECK(live_before(p, "s2") == 14 * live_mib);
  for (const auto& s : p.steps) CHECK(s.from == "s1");
  // 84 MiB over three: 28 each, within the 5% band.
  for (const char* n : {"s1", "s2", "s3"}) {
    CHECK(bytes_on(p, n) >= 26 * live_mib);
    CHECK(bytes_on(p, n) <= 30 * live_mib);
  }
  CHECK(p.imbalance_after < 1.06);
}

TEST_CASE("capacity is compared with live bytes") {
  auto f = live_after_purge();
  f.shards[1].capacity_bytes = 20 * live_mib;  // s2 holds 14 MiB live: room for 6
  auto p = plan(f, {});
  REQUIRE_FALSE(p.steps.empty());
  CHECK(bytes_on(p, "s2") <= 20 * live_mib);
  CHECK(bytes_on(p, "s2") > 14 * live_mib);  // it still receives
  CHECK(bytes_on(p, "s3") > bytes_on(p, "s2"));
}

TEST_CASE("--max-bytes counts live bytes moved") {
  Options o;
  o.max_bytes = 10 * live_mib;
  auto p = plan(live_after_purge(), o);
  REQUIRE_FALSE(p.steps.empty());
  std::int64_t moved = 0;
  for (const auto& s : p.steps) moved += s.bytes;
  CHECK(moved == p.bytes_moved);
  CHECK(moved <= 10 * live_mib);
  CHECK(moved >= 9 * live_mib);
}

TEST_CASE("the batch estimate uses the batch size split, merge and move default to: 64 MB") {
  Options defaults;
  CHECK(defaults.batch_bytes == 64'000'000);
  auto f = live_after_purge();
  for (auto& m : f.mappings) {
    m.bytes *= 10;  // 480 / 60 / 60 MiB live
    for (auto& sl : m.slices) sl.bytes *= 10;
  }
  for (auto& s : f.shards) s.fixed_bytes *= 10;
  auto p = plan(f, {});
  REQUIRE_FALSE(p.steps.empty());
  for (const auto& s : p.steps) CHECK(s.batches == std::max<std::int64_t>(1, (s.bytes + 64'000'000 - 1) / 64'000'000));
  CHECK(std::any_of(p.steps.begin(), p.steps.end(), [](const Step& s) { return s.batches > 1; }));
}
