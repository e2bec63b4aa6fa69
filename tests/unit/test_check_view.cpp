// The check's view of the catalog per shard pass: which catalog changes make a pass's results
// untrustworthy (a new operation, a mapping changed outside the ranges in flight).
#include <doctest/doctest.h>

#include "check/fleet.hpp"

using namespace shardctl;
using namespace shardctl::check;
using routing::KeyType;

namespace {
catalog::Mapping range_mapping(const std::string& range, const std::string& shard,
                               catalog::MappingStatus status = catalog::MappingStatus::online) {
  catalog::Mapping m;
  m.range = routing::parse_range(KeyType::int8, range);
  m.shard = shard;
  m.status = status;
  return m;
}
Fleet fleet_of(std::vector<catalog::Mapping> mappings) {
  Fleet f;
  catalog::LoadedMap lm;
  lm.mappings = std::move(mappings);
  f.maps.emplace("m", std::move(lm));
  return f;
}
void exclude(Fleet& f, const std::string& op, const std::string& range) {
  auto r = routing::parse_range(KeyType::int8, range);
  f.excluded_ops.insert(op);
  f.excluded_ranges[op] = {"m", r};
  f.in_flight["m"].push_back(r);
}
}  // namespace

TEST_CASE("mapping signature leaves out mappings that touch excluded ranges") {
  std::vector<catalog::Mapping> ms{range_mapping("..100", "a"), range_mapping("100..200", "b"), range_mapping("200..", "c")};
  auto all = mapping_signature(ms, {});
  CHECK(all == "..100>a:online\n100..200>b:online\n200..>c:online\n");
  CHECK(mapping_signature(ms, {routing::parse_range(KeyType::int8, "150..160")}) == "..100>a:online\n200..>c:online\n");
  CHECK(mapping_signature(ms, {routing::parse_range(KeyType::int8, "100..200")}) == "..100>a:online\n200..>c:online\n");
}

TEST_CASE("a batch flipping inside an operation's range does not move the view") {
  Fleet before = fleet_of({range_mapping("..100", "a"), range_mapping("100..200", "a"), range_mapping("200..", "c")});
  exclude(before, "op1", "100..200");
  Fleet after = fleet_of({range_mapping("..100", "a"), range_mapping("100..110", "c"), range_mapping("110..200", "a", catalog::MappingStatus::offline),
                          range_mapping("200..", "c")});
  exclude(after, "op1", "100..200");
  CHECK_FALSE(fleet_moved(before, after));
}

TEST_CASE("a new operation or a mapping changed outside the ranges in flight moves the view") {
  Fleet before = fleet_of({range_mapping("..100", "a"), range_mapping("100..", "b")});
  Fleet op = fleet_of({range_mapping("..100", "a"), range_mapping("100..", "b")});
  exclude(op, "op2", "..50");
  CHECK(fleet_moved(before, op));
  Fleet edited = fleet_of({range_mapping("..120", "a"), range_mapping("120..", "b")});
  CHECK(fleet_moved(before, edited));
  Fleet same = fleet_of({range_mapping("..100", "a"), range_mapping("100..", "b")});
  CHECK_FALSE(fleet_moved(before, same));
}

TEST_CASE("exclusions carry over to later reads") {
  Fleet earlier = fleet_of({range_mapping("..", "a")});
  exclude(earlier, "op1", "10..20");
  Fleet later = fleet_of({range_mapping("..", "a")});
  carry_exclusions(earlier, later);
  CHECK(later.excluded_ops.count("op1") == 1);
  REQUIRE(later.in_flight["m"].size() == 1);
  CHECK(routing::format_range(later.in_flight["m"][0]) == "10..20");
  carry_exclusions(earlier, later);  // idempotent
  CHECK(later.in_flight["m"].size() == 1);
}
