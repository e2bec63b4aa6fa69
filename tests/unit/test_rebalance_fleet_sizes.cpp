// What the planner is given from a stats snapshot (rebalance::measured_sizes): live bytes, not
// the physical sizes that keep the dead space of deleted rows. The fleet of t_rebalance_live_bytes:
// three shards whose databases take the same disk, two of them after most of their rows were
// deleted (no VACUUM FULL). Planned on physical sizes it was "balanced"; on live bytes the full
// shard gives data to the other two.
#include <doctest/doctest.h>

#include <algorithm>

#include "planner/planner.hpp"
#include "rebalance/fleet.hpp"

using namespace shardctl;

namespace {

constexpr std::int64_t fleet_sizes_mib = 1 << 20;

// One range mapping [low, high) of map "m" on `shard` with `slices` equal histogram slices;
// `live` is nullopt for a snapshot recorded before live bytes were measured.
stats::MappingStats fleet_sizes_mapping(std::int64_t id, std::int64_t low, std::int64_t high, const std::string& shard,
                                        std::int64_t rows, std::int64_t physical, std::optional<std::int64_t> live,
                                        int slices = 64) {
  stats::MappingStats m;
  m.mapping_id = id;
  m.map = "m";
  m.map_version = 1;
  m.shard = shard;
  m.range = {routing::Key{low}, routing::Key{high}};
  m.rows = rows;
  m.bytes = physical;
  m.live_bytes = live;
  for (int i = 0; i < slices; ++i) {
    stats::Slice sl;
    sl.low = routing::Key{low + (high - low) * i / slices};
    sl.rows = rows / slices;
    sl.bytes = physical / slices;
    if (live) sl.live_bytes = *live / slices;
    m.slices.push_back(sl);
  }
  return m;
}

stats::ShardStats fleet_sizes_shard(const std::string& name, std::int64_t db_bytes, std::optional<std::int64_t> live) {
  stats::ShardStats s;
  s.shard = name;
  s.status = catalog::ShardStatus::online;
  s.db_bytes = db_bytes;
  s.live_bytes = live;
  return s;
}

// 8 MiB of system catalogs and reference tables per shard; 56 MiB of sharded tables on each,
// of which s1's rows fill 48 MiB and s2's and s3's (after a purge) 6 MiB.
stats::Snapshot fleet_sizes_after_purge(bool with_live) {
  auto live = [&](std::int64_t v) { return with_live ? std::optional<std::int64_t>(v) : std::nullopt; };
  stats::Snapshot s;
  s.id = 7;
  s.maps.push_back({"m", routing::MapKind::range, routing::KeyType::int8, 1});
  const std::int64_t fixed = 8 * fleet_sizes_mib, physical = 56 * fleet_sizes_mib;
  s.shards = {fleet_sizes_shard("s1", fixed + physical, live(fixed + 48 * fleet_sizes_mib)),
              fleet_sizes_shard("s2", fixed + physical, live(fixed + 6 * fleet_sizes_mib)),
              fleet_sizes_shard("s3", fixed + physical, live(fixed + 6 * fleet_sizes_mib))};
  s.mappings = {fleet_sizes_mapping(1, 0, 1000, "s1", 357750, physical, live(48 * fleet_sizes_mib)),
                fleet_sizes_mapping(2, 1000, 2000, "s2", 47250, physical, live(6 * fleet_sizes_mib)),
                fleet_sizes_mapping(3, 2000, 3000, "s3", 45000, physical, live(6 * fleet_sizes_mib))};
  return s;
}

planner::Fleet fleet_sizes_fleet(const rebalance::MeasuredSizes& sizes) {
  planner::Fleet f;
  f.maps.push_back({"m", routing::MapKind::range, routing::KeyType::int8});
  for (const auto& [name, fixed] : sizes.fixed_bytes) {
    planner::Shard sh;
    sh.name = name;
    sh.fixed_bytes = fixed;
    f.shards.push_back(sh);
  }
  f.mappings = sizes.mappings;
  return f;
}

bool fleet_sizes_note(const std::vector<std::string>& notes, const std::string& part) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("the planner is given live bytes; fixed bytes leave the sharded tables' dead space out") {
  auto sizes = rebalance::measured_sizes(fleet_sizes_after_purge(true));
  CHECK(sizes.live);
  REQUIRE(sizes.mappings.size() == 3);
  CHECK(sizes.mappings[0].bytes == 48 * fleet_sizes_mib);
  CHECK(sizes.mappings[1].bytes == 6 * fleet_sizes_mib);
  CHECK(sizes.mappings[1].rows == 47250);
  REQUIRE(sizes.mappings[0].slices.size() == 64);
  CHECK(sizes.mappings[0].slices[0].bytes == 48 * fleet_sizes_mib / 64);  // live, as the mapping
  for (const auto* s : {"s1", "s2", "s3"}) CHECK(sizes.fixed_bytes.at(s) == 8 * fleet_sizes_mib);
  // The emptied shards are named, with the size they are planned as.
  CHECK(fleet_sizes_note(sizes.notes, "shard s2: 50.0 MiB of its 64.0 MiB is dead space"));
  CHECK(fleet_sizes_note(sizes.notes, "planned as 14.0 MiB"));
  CHECK_FALSE(fleet_sizes_note(sizes.notes, "shard s1:"));
  CHECK_FALSE(fleet_sizes_note(sizes.notes, "physical sizes"));
}

TEST_CASE("after a purge on two of three shards, the full shard gives data to them") {
  auto f = fleet_sizes_fleet(rebalance::measured_sizes(fleet_sizes_after_purge(true)));
  auto p = planner::plan(f, {});
  REQUIRE_FALSE(p.steps.empty());
  for (const auto& s : p.steps) CHECK(s.from == "s1");
  CHECK(p.imbalance_before > 1.5);
  CHECK(p.imbalance_after < 1.08);
  // 60 MiB of live data over three shards: 20 MiB of mapped data each, 28 MiB with fixed bytes.
  for (const auto& b : p.shards) CHECK(std::llabs(b.bytes_after - 28 * fleet_sizes_mib) < 2 * fleet_sizes_mib);
  CHECK(std::llabs(p.bytes_moved - 28 * fleet_sizes_mib) < 2 * fleet_sizes_mib);
}

TEST_CASE("a snapshot without live bytes still plans, on physical sizes, and says so") {
  auto sizes = rebalance::measured_sizes(fleet_sizes_after_purge(false));
  CHECK_FALSE(sizes.live);
  CHECK(sizes.mappings[0].bytes == 56 * fleet_sizes_mib);
  CHECK(sizes.mappings[0].slices[0].bytes == 56 * fleet_sizes_mib / 64);
  CHECK(fleet_sizes_note(sizes.notes, "stats snapshot 7 has no live bytes"));
  CHECK(fleet_sizes_note(sizes.notes, "run shardctl stats collect"));
  // Physical sizes are equal: balanced, as planning was before live bytes.
  auto p = planner::plan(fleet_sizes_fleet(sizes), {});
  CHECK(p.steps.empty());
}

TEST_CASE("one mapping without live bytes puts the whole snapshot on physical sizes") {
  auto snap = fleet_sizes_after_purge(true);
  snap.mappings[2].slices[3].live_bytes.reset();
  auto sizes = rebalance::measured_sizes(snap);
  CHECK_FALSE(sizes.live);
  CHECK(sizes.mappings[0].bytes == 56 * fleet_sizes_mib);  // never live for some, physical for others
}

TEST_CASE("a shard that gave every mapping away keeps none of its tables' dead space as fixed bytes") {
  auto snap = fleet_sizes_after_purge(true);
  // s4 held a range once; a merge moved it all to s3: 56 MiB of its tables is dead space.
  snap.shards.push_back(fleet_sizes_shard("s4", 64 * fleet_sizes_mib, 8 * fleet_sizes_mib));
  auto sizes = rebalance::measured_sizes(snap);
  CHECK(sizes.fixed_bytes.at("s4") == 8 * fleet_sizes_mib);
  auto p = planner::plan(fleet_sizes_fleet(sizes), {});
  REQUIRE_FALSE(p.steps.empty());
  CHECK(std::any_of(p.steps.begin(), p.steps.end(), [](const planner::Step& s) { return s.to == "s4"; }));
  // On physical sizes it would be the fullest shard: fixed bytes, its whole database.
  snap.shards.back().live_bytes.reset();
  for (auto& m : snap.mappings) m.live_bytes.reset();
  CHECK(rebalance::measured_sizes(snap).fixed_bytes.at("s4") == 64 * fleet_sizes_mib);
}
