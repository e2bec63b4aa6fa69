// The planner's words (planner/planner.hpp): each enum value reads back as itself, the words are
// the ones plan and fleet files have always held, and an unknown word in a file is a data
// error (exit 65) with the message it has always had.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "core/error.hpp"
#include "planner/json.hpp"
#include "planner_fleets.hpp"
#include "support.hpp"
#include "words_checks.hpp"

namespace test_planner_words {

using namespace planner_test;
namespace test = shardctl::test;
using nlohmann::json;

TEST_CASE("every planner enum reads back from its word, and only from it") {
  const std::pair<ShardStatus, const char*> statuses[] = {
      {ShardStatus::online, "online"}, {ShardStatus::readonly, "readonly"}, {ShardStatus::offline, "offline"}};
  test::check_words(statuses, test::find_as<ShardStatus>);
  const std::pair<StepKind, const char*> kinds[] = {{StepKind::split, "split"}, {StepKind::move, "move"}, {StepKind::merge, "merge"}};
  test::check_words(kinds, test::find_as<StepKind>);
  const std::pair<Objective, const char*> objectives[] = {
      {Objective::size, "size"}, {Objective::load, "load"}, {Objective::both, "both"}};
  test::check_words(objectives, test::find_as<Objective>);
  const std::pair<bool, const char*> sides[] = {{true, "upper"}, {false, "lower"}};
  test::check_words(sides, moving_side_name, moving_side_named);
  for (const char* unknown : {"", "Online", "bogus", "upper ", "READONLY"}) {
    CHECK_FALSE(shardctl::from_text<ShardStatus>(unknown));
    CHECK_FALSE(shardctl::from_text<StepKind>(unknown));
    CHECK_FALSE(shardctl::from_text<Objective>(unknown));
  }
  CHECK_FALSE(moving_side_named("Upper"));
}

TEST_CASE("a fleet file keeps its status words, and an unknown one is refused as before") {
  auto f = even_fleet(3, 2, 1000, 2);
  f.shards[1].status = ShardStatus::readonly;
  f.shards[2].status = ShardStatus::offline;
  auto j = to_json(f);
  CHECK(j["shards"][0]["status"] == "online");
  CHECK(j["shards"][1]["status"] == "readonly");
  CHECK(j["shards"][2]["status"] == "offline");
  auto back = fleet_from_json(j);
  CHECK(back.shards[1].status == ShardStatus::readonly);
  CHECK(back.shards[2].status == ShardStatus::offline);
  j["shards"][1]["status"] = "draining";
  CHECK(test::data_error_of([&] { fleet_from_json(j); }) == "fleet.shards[1].status: expected online, readonly or offline");
}

TEST_CASE("a plan file's unknown kind, side or objective is refused with the message it always had") {
  auto f = even_fleet(2, 4, 1000, 4);
  f.shards.push_back(shard("new"));
  auto j = to_json(plan(f, {}));
  REQUIRE(!j["steps"].empty());
  auto bad = j;
  bad["steps"][0]["kind"] = "teleport";
  CHECK(test::data_error_of([&] { plan_from_json(bad); }) == "plan.steps[0].kind: expected split, move or merge, not 'teleport'");
  bad = j;
  bad["steps"][0]["move"] = "sideways";
  CHECK(test::data_error_of([&] { plan_from_json(bad); }) == "plan.steps[0].move: expected upper or lower");
  bad = j;
  bad["objective"] = "speed";
  CHECK(test::data_error_of([&] { plan_from_json(bad); }) == "plan.objective: expected size, load or both, not 'speed'");
}

}  // namespace test_planner_words
