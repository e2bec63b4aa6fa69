// The planner on small synthetic fleets: balanced fleets stay put, new and drained shards,
// excluded / readonly / held, limits, hot keys, histogram cuts, load, hash and text keys.
// A check over a plan's steps ("every step goes to X", "no step moves Y") holds on a plan with
// none: wherever the fleet is unbalanced, the test first requires that the plan has steps.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/error.hpp"
#include "planner_fleets.hpp"

using namespace planner_test;
using shardctl::Error;
using shardctl::ErrorKind;
using shardctl::routing::KeyType;
using shardctl::routing::MapKind;

namespace {

// The plan has steps, and they move what the plan says it moves.
void require_steps(const Plan& p) {
  REQUIRE_FALSE(p.steps.empty());
  std::int64_t sum = 0;
  for (const auto& s : p.steps) sum += s.bytes;
  CHECK(sum == p.bytes_moved);
}

bool touches(const Plan& p, const std::string& shard) {
  return std::any_of(p.steps.begin(), p.steps.end(), [&](const Step& s) { return s.from == shard || s.to == shard; });
}

void check_prediction(const Fleet& f, const Plan& p) {
  auto after = shard_usage(apply_plan(f, p));
  REQUIRE(after.size() == p.shards.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].bytes == p.shards[i].bytes_after);
    CHECK(after[i].load == doctest::Approx(p.shards[i].load_after).epsilon(1e-9));
  }
}

}  // namespace

TEST_CASE("a balanced fleet needs no step") {
  auto f = even_fleet(4, 10, 1000, 4);
  auto p = plan(f, {});
  CHECK(p.steps.empty());
  CHECK(p.bytes_moved == 0);
  CHECK(p.imbalance_before == doctest::Approx(1.0));
  REQUIRE(!p.notes.empty());
  CHECK(p.notes.back().find("balanced") != std::string::npos);
}

TEST_CASE("a new empty shard receives its share, no more") {
  auto f = even_fleet(3, 8, 1000);
  f.shards.push_back(shard("new"));
  auto p = plan(f, {});
  require_steps(p);
  CHECK(p.imbalance_after <= 1.05);
  CHECK(bytes_on(p, "new") == 6000);  // 24 000 bytes over 4 shards
  CHECK(p.bytes_moved == 6000);       // the lower bound: nothing moves twice or in circles
  for (const auto& s : p.steps) CHECK(s.to == "new");
  check_prediction(f, p);
}

TEST_CASE("a drained shard gives everything and receives nothing") {
  auto f = even_fleet(4, 6, 1000, 4);
  Options o;
  o.drain_shards = {"s1"};
  auto p = plan(f, o);
  require_steps(p);
  CHECK(bytes_on(p, "s1") == 0);
  for (const auto& s : p.steps) CHECK(s.to != "s1");
  CHECK(p.bytes_moved == 6000);
  check_prediction(f, p);
}

TEST_CASE("an excluded shard neither gives nor receives") {
  auto f = even_fleet(3, 6, 1000);
  f.shards.push_back(shard("new"));
  f.shards.push_back(shard("skip"));
  Options o;
  o.exclude_shards = {"skip", "s0"};
  auto p = plan(f, o);
  require_steps(p);
  CHECK(!touches(p, "skip"));
  CHECK(!touches(p, "s0"));
  CHECK(bytes_on(p, "s0") == 6000);
}

TEST_CASE("readonly and offline shards never receive") {
  auto f = even_fleet(2, 6, 1000);
  f.shards.push_back(shard("ro", ShardStatus::readonly));
  f.shards.push_back(shard("off", ShardStatus::offline));
  // s0 and s1 hold 6000 each, ro and off nothing: only because these may not receive is the
  // fleet balanced.
  auto p = plan(f, {});
  CHECK(p.steps.empty());
  Options o;
  o.drain_shards = {"s0"};
  p = plan(f, o);
  require_steps(p);
  for (const auto& s : p.steps) CHECK(s.to == "s1");
  CHECK(bytes_on(p, "s1") == 12000);
  o.drain_shards = {"off"};
  CHECK_THROWS_AS(plan(f, o), Error);
}

TEST_CASE("a held mapping never moves") {
  auto f = even_fleet(1, 4, 1000, 4);
  for (auto& m : f.mappings) m.held = true;
  f.shards.push_back(shard("new"));
  auto p = plan(f, {});
  CHECK(p.steps.empty());
  f.mappings[0].held = false;
  p = plan(f, {});
  require_steps(p);
  for (const auto& s : p.steps) CHECK(shardctl::routing::compare_keys(*s.range.low, Key{std::int64_t{1000}}) < 0);
  CHECK(bytes_on(p, "new") == 1000);  // all of the one mapping it may move, within its 2000 share
}

TEST_CASE("max_moves and max_bytes bound the plan") {
  auto f = even_fleet(2, 20, 1000);
  f.shards.push_back(shard("a"));
  f.shards.push_back(shard("b"));
  Options o;
  o.max_moves = 3;
  auto p = plan(f, o);
  CHECK(p.steps.size() == 3);
  CHECK(p.notes.back().find("--max-moves") != std::string::npos);
  o = {};
  o.max_bytes = 4500;
  p = plan(f, o);
  require_steps(p);
  CHECK(p.bytes_moved <= 4500);
  CHECK(p.bytes_moved >= 4000);
  check_prediction(f, p);
}

TEST_CASE("a range is cut at the histogram boundary that moves just the gap") {
  Fleet f;
  f.maps.push_back({"m", MapKind::range, KeyType::int8});
  f.shards = {shard("a"), shard("b")};
  f.mappings.push_back(range_mapping("m", 0, 1000, "a", 10000, 10));
  auto p = plan(f, {});
  REQUIRE(p.steps.size() == 1);
  const auto& s = p.steps[0];
  CHECK(s.kind == StepKind::split);
  REQUIRE(s.at);
  CHECK(std::get<std::int64_t>(*s.at) == 500);
  CHECK(s.bytes == 5000);
  CHECK(bytes_on(p, "a") == 5000);
  check_prediction(f, p);
  auto after = apply_plan(f, p);
  CHECK(after.mappings.size() == 2);
}

TEST_CASE("a hot key bigger than a shard's target is reported and isolated, never moved") {
  Fleet f;
  f.maps.push_back({"m", MapKind::range, KeyType::int8});
  f.shards = {shard("a"), shard("b"), shard("c")};
  auto m = range_mapping("m", 0, 1000, "a", 10000, 10);
  m.slices[4].single_key = true;  // key 400 holds 8000 of the 17 000 bytes
  m.slices[4].bytes = 8000 * 10 / 17;
  for (int i = 0; i < 10; ++i)
    if (i != 4) m.slices[static_cast<std::size_t>(i)].bytes = 1000 * 10 / 17 * 1;
  m.bytes = 17000;
  f.mappings.push_back(m);
  f.mappings.push_back(range_mapping("m", 1000, 2000, "b", 2000, 2));
  f.mappings.push_back(range_mapping("m", 2000, 3000, "c", 2000, 2));
  auto p = plan(f, {});
  require_steps(p);
  REQUIRE(p.unsplittable.size() == 1);
  const auto& u = p.unsplittable[0];
  CHECK(u.shard == "a");
  CHECK(std::get<std::int64_t>(u.key) == 400);
  CHECK(u.isolated);
  CHECK(bytes_on(p, "a") == u.bytes);
  for (const auto& s : p.steps) {
    CHECK(s.from == "a");
    CHECK(!shardctl::routing::range_contains(s.range, Key{std::int64_t{400}}));
  }
  check_prediction(f, p);
}

// Found by test_planner_properties (seed 1506397433844683676): the neighbour of a hot key is
// an indivisible slice bigger than the key; wherever it went, its new shard would end fuller,
// relative to its fair target, than the hot key's shard was, so it stays.
TEST_CASE("a hot key's neighbour that would make another shard the fullest stays") {
  Fleet f;
  f.maps.push_back({"n", MapKind::range, KeyType::int8});
  f.shards = {shard("s3"), shard("s4"), shard("s5"), shard("s6")};
  f.shards[3].weight = 2;
  auto m = range_mapping("n", -5000, -4998, "s6", 0, 2, 0);
  m.slices[0].load = 23;
  m.slices[0].single_key = true;
  m.slices[1].load = 24;
  m.load = 47;
  f.mappings.push_back(m);
  Options o;
  o.objective = Objective::load;
  o.threshold = 0.1;
  o.min_improvement = 0.3;
  auto p = plan(f, o);
  CHECK(p.imbalance_after <= p.imbalance_before);
  CHECK(p.steps.empty());
}

TEST_CASE("a hot point mapping stays and its neighbours leave") {
  Fleet f;
  f.maps.push_back({"l", MapKind::list, KeyType::text});
  f.shards = {shard("a"), shard("b")};
  auto point = [&](std::string key, std::string on, std::int64_t bytes) {
    Mapping m;
    m.map = "l";
    m.range = shardctl::routing::point_range(KeyType::text, Key{key});
    m.is_point = true;
    m.shard = std::move(on);
    m.bytes = bytes;
    f.mappings.push_back(m);
  };
  point("whale", "a", 9000);
  point("cod", "a", 500);
  point("eel", "a", 400);
  point("ray", "b", 100);
  auto p = plan(f, {});
  REQUIRE(p.unsplittable.size() == 1);
  CHECK(std::get<std::string>(p.unsplittable[0].key) == "whale");
  CHECK(p.unsplittable[0].isolated);
  CHECK(p.steps.size() == 2);
  CHECK(bytes_on(p, "a") == 9000);
  check_prediction(f, p);
}

TEST_CASE("the load objective balances load, not bytes") {
  Fleet f;
  f.maps.push_back({"m", MapKind::range, KeyType::int8});
  f.shards = {shard("a"), shard("b")};
  for (int i = 0; i < 8; ++i)
    f.mappings.push_back(range_mapping("m", i * 100, i * 100 + 100, i < 4 ? "a" : "b", 1000, 0, i < 4 ? 10.0 : 1.0));
  Options o;
  o.objective = Objective::load;
  auto p = plan(f, o);
  require_steps(p);
  CHECK(p.imbalance_before > 1.5);
  CHECK(p.imbalance_after < 1.3);
  auto load_a = p.shards[0].load_after, load_b = p.shards[1].load_after;
  CHECK(std::abs(load_a - load_b) < 10.0);
  CHECK(plan(f, {}).steps.empty());  // sizes are equal already
  check_prediction(f, p);
}

TEST_CASE("hash maps use int8 hash bounds, unbounded at both ends") {
  Fleet f;
  f.maps.push_back({"h", MapKind::hash, KeyType::int8});
  f.shards = {shard("a"), shard("b")};
  Mapping m;
  m.map = "h";
  m.shard = "a";
  m.bytes = 8000;
  for (int i = 0; i < 8; ++i) {
    Slice s;
    s.low = Key{std::int64_t{-4} * (std::int64_t{1} << 61) + i * (std::int64_t{1} << 61)};
    s.bytes = 1000;
    m.slices.push_back(s);
  }
  f.mappings.push_back(m);
  auto p = plan(f, {});
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].kind == StepKind::split);
  CHECK(std::get<std::int64_t>(*p.steps[0].at) == 0);
  CHECK(p.steps[0].bytes == 4000);
  check_prediction(f, p);
}

TEST_CASE("text keys cut at a text boundary") {
  Fleet f;
  f.maps.push_back({"t", MapKind::range, KeyType::text});
  f.shards = {shard("a"), shard("b")};
  Mapping m;
  m.map = "t";
  m.shard = "a";
  m.bytes = 4000;
  for (std::string k : {"a", "g", "n", "t"}) m.slices.push_back({Key{k}, 10, 1000, 0, false});
  m.range.low = Key{std::string("a")};
  f.mappings.push_back(m);
  auto p = plan(f, {});
  REQUIRE(p.steps.size() == 1);
  CHECK(std::get<std::string>(*p.steps[0].at) == "n");
  check_prediction(f, p);
}

TEST_CASE("options naming unknown shards or maps are usage errors") {
  auto f = even_fleet(2, 2, 100);
  Options o;
  o.exclude_shards = {"nope"};
  try {
    plan(f, o);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    CHECK(std::string(e.what()).find("nope") != std::string::npos);
  }
  o = {};
  o.map = "nomap";
  CHECK_THROWS_AS(plan(f, o), Error);
  o = {};
  o.drain_shards = {"ghost"};
  CHECK_THROWS_AS(plan(f, o), Error);
}

TEST_CASE("capacity caps a shard's target and what it receives") {
  auto f = even_fleet(3, 9, 1000);
  for (int i = 0; i < 3; ++i) f.shards[static_cast<std::size_t>(i)].capacity_bytes = 10000;
  f.shards.push_back(shard("small"));
  f.shards.back().capacity_bytes = 2000;
  auto p = plan(f, {});
  require_steps(p);
  CHECK(bytes_on(p, "small") <= 2000);
  CHECK(p.shards.back().target_bytes == 2000);
  // small is the only shard below its target: it receives, up to its capacity and no more.
  for (const auto& s : p.steps) CHECK(s.to == "small");
  CHECK(bytes_on(p, "small") == 2000);
}

TEST_CASE("weights set each shard's share") {
  auto f = even_fleet(2, 6, 1000);
  f.shards[1].weight = 2;
  auto p = plan(f, {});
  require_steps(p);
  CHECK(bytes_on(p, "s1") == 8000);
  CHECK(p.imbalance_after == doctest::Approx(1.0));
}
