// Plan and fleet JSON: exact round trips (bigint, text and uuid keys, unbounded sides), and a
// malformed plan is a data error (exit 65) that names the field. Plus the text rendering.
#include <doctest/doctest.h>

#include <sstream>

#include "core/error.hpp"
#include "planner/json.hpp"
#include "planner/render.hpp"
#include "planner_fleets.hpp"

using namespace planner_test;
using nlohmann::json;
using shardctl::Error;
using shardctl::ErrorKind;
using shardctl::routing::KeyType;
using shardctl::routing::MapKind;

namespace {

Fleet mixed_fleet() {
  auto f = even_fleet(2, 5, 1000, 5);
  f.shards.push_back(shard("new"));
  f.shards.back().capacity_bytes = 1 << 20;
  f.shards.back().weight = 1.5;
  f.maps.push_back({"t", MapKind::range, KeyType::text});
  Mapping m;
  m.map = "t";
  m.shard = "s0";
  m.bytes = 4000;
  m.load = 0.1;
  for (std::string k : {"a", "h", "p", "w"}) m.slices.push_back({Key{k}, 3, 1000, 0.025, k == "p"});
  f.mappings.push_back(m);
  f.maps.push_back({"u", MapKind::list, KeyType::uuid});
  Mapping u;
  u.map = "u";
  u.shard = "s1";
  u.is_point = true;
  u.bytes = 77;
  auto key = shardctl::routing::parse_key(KeyType::uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
  u.range = shardctl::routing::point_range(KeyType::uuid, key);
  f.mappings.push_back(u);
  return f;
}

void expect_data_error(const json& j, const std::string& field) {
  try {
    plan_from_json(j);
    FAIL("no error for " << field);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);
    CHECK(shardctl::exit_code_for(e.kind()) == 65);
    CHECK_MESSAGE(std::string(e.what()).find(field) != std::string::npos, e.what());
  }
}

}  // namespace

TEST_CASE("a plan round-trips through JSON exactly") {
  auto f = mixed_fleet();
  auto p = plan(f, {});
  REQUIRE(!p.steps.empty());
  auto j = to_json(p);
  auto back = plan_from_json(json::parse(j.dump()));
  CHECK(to_json(back) == j);
  CHECK(back.steps.size() == p.steps.size());
  CHECK(back.imbalance_after == p.imbalance_after);
  // The text map's keys stay text even when they look like numbers.
  Plan t;
  t.maps.push_back({"t", MapKind::range, KeyType::text});
  Step s;
  s.map = "t";
  s.range = {Key{std::string("10")}, std::nullopt};
  s.at = Key{std::string("10")};
  s.kind = StepKind::split;
  t.steps.push_back(s);
  t.unsplittable.push_back({"t", Key{std::string("42")}, "a", 5, true});
  auto tb = plan_from_json(to_json(t));
  CHECK(std::get<std::string>(*tb.steps[0].range.low) == "10");
  CHECK(!tb.steps[0].range.high);
  CHECK(std::get<std::string>(tb.unsplittable[0].key) == "42");
}

TEST_CASE("a fleet round-trips through JSON exactly") {
  auto f = mixed_fleet();
  auto j = to_json(f);
  auto back = fleet_from_json(json::parse(j.dump()));
  CHECK(to_json(back) == j);
  auto p = plan(f, {});
  REQUIRE_FALSE(p.steps.empty());  // two empty plans would compare equal whatever the fleet lost
  CHECK(to_json(plan(back, {})) == to_json(p));
}

TEST_CASE("a malformed plan is a data error naming the field") {
  auto j = to_json(plan(mixed_fleet(), {}));
  REQUIRE(j["steps"].size() >= 1);
  auto bad = j;
  bad["steps"][0]["bytes"] = "many";
  expect_data_error(bad, "steps[0].bytes");
  bad = j;
  bad["steps"][0].erase("to");
  expect_data_error(bad, "steps[0].to");
  bad = j;
  bad["steps"][0]["low"] = "not-a-number";
  bad["steps"][0]["map"] = "m";
  expect_data_error(bad, "steps[0].low");
  bad = j;
  bad["steps"][0]["map"] = "ghost";
  expect_data_error(bad, "steps[0].map");
  bad = j;
  bad["steps"][0]["kind"] = "teleport";
  expect_data_error(bad, "steps[0].kind");
  bad = j;
  bad["steps"][0]["after"] = json::array({5});
  expect_data_error(bad, "steps[0].after[0]");
  bad = j;
  bad["maps"][0]["bound_type"] = "float";
  expect_data_error(bad, "maps[0].bound_type");
  bad = j;
  bad.erase("imbalance_after");
  expect_data_error(bad, "imbalance_after");
  expect_data_error(json::array(), "plan");
}

TEST_CASE("numbers out of a field's range or of the wrong type are refused, never converted or wrapped") {
  auto j = to_json(plan(mixed_fleet(), {}));
  REQUIRE(j["steps"].size() >= 1);
  auto refused = [&](const char* field, json value, const std::string& message) {
    auto bad = j;
    if (std::string(field).rfind("steps.", 0) == 0) bad["steps"][0][std::string(field).substr(6)] = value;
    else bad[field] = value;
    try {
      plan_from_json(bad);
      FAIL("accepted " << field << " = " << value.dump());
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::data);
      CHECK(std::string(e.what()) == message);
    }
  };
  refused("steps.rows", -1, "plan.steps[0].rows: expected a whole number >= 0, not -1");
  refused("steps.rows", 1.5, "plan.steps[0].rows: expected a whole number >= 0, not 1.5");
  refused("steps.rows", "7", "plan.steps[0].rows: expected a whole number >= 0, not \"7\"");
  // 2^63 parses as an unsigned integer: out of int64's range, not wrapped to a negative.
  refused("steps.bytes", json::parse("9223372036854775808"),
          "plan.steps[0].bytes: expected a whole number >= 0, not 9223372036854775808");
  refused("steps.batches", 0, "plan.steps[0].batches: expected a whole number from 1 to 2147483647, not 0");
  refused("steps.batches", json::parse("3000000000"), "plan.steps[0].batches: expected a whole number from 1 to 2147483647, not 3000000000");
  refused("steps.load", -0.5, "plan.steps[0].load: expected a number >= 0, not -0.5");
  refused("steps.offline_seconds_per_batch", true, "plan.steps[0].offline_seconds_per_batch: expected a number, not true");
  refused("imbalance_before", -1, "plan.imbalance_before: expected a number >= 0, not -1");
  refused("bytes_moved", json::parse("1e300"), "plan.bytes_moved: expected a whole number >= 0, not 1e+300");
  // The largest values in range pass.
  auto big = j;
  big["steps"][0]["batches"] = 2147483647;
  big["steps"][0]["bytes"] = json::parse("9223372036854775807");
  CHECK(plan_from_json(big).steps[0].batches == 2147483647);
}

TEST_CASE("apply_plan refuses a step naming no mapping") {
  auto f = mixed_fleet();
  auto p = plan(f, {});
  REQUIRE(!p.steps.empty());
  p.steps[0].from = "new";
  try {
    apply_plan(f, p);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::data);
  }
}

TEST_CASE("the text rendering shows steps, bars, hot keys and notes") {
  Fleet f;
  f.maps.push_back({"m", MapKind::range, KeyType::int8});
  f.shards = {shard("a"), shard("b"), shard("c")};
  auto m = range_mapping("m", 0, 1000, "a", 30000, 10);
  m.slices[2].single_key = true;
  m.slices[2].bytes = 30000;
  f.mappings.push_back(m);
  auto p = plan(f, {});
  REQUIRE_FALSE(p.steps.empty());
  std::ostringstream out;
  print_text(out, p);
  auto text = out.str();
  CHECK(text.find("Rebalance plan (size)") != std::string::npos);
  CHECK(text.find("split") != std::string::npos);
  CHECK(text.find("a -> b") != std::string::npos);
  CHECK(text.find("[##") != std::string::npos);
  CHECK(text.find("Too big to move") != std::string::npos);
  CHECK(text.find("key 200") != std::string::npos);
  CHECK(text.find("Notes:") != std::string::npos);
  CHECK(pretty_bytes(1536) == "1.5 kB");
  CHECK(pretty_bytes(512) == "512 B");
}
