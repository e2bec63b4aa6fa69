// The guard's refusals (shardside/names.hpp): the states sql/guard.sql passes to shardctl.refuse
// are exactly refusal_states, each refusal's constraint is "shardctl_" and its state, and the
// malformed-route error names bad_route_constraint, so applications reading the constraint name
// (man/shardctl-split.1, "What applications see") and the code cannot drift apart.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <string_view>

#include "shardside/names.hpp"
#include "shardside/sql.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_shardside_refusals {

namespace ss = shardctl::shardside;

// The quoted first argument of every "shardctl.refuse('" call in the SQL text.
std::set<std::string> refused_states(std::string_view sql) {
  constexpr std::string_view call = "shardctl.refuse('";
  std::set<std::string> out;
  for (auto at = sql.find(call); at != std::string_view::npos; at = sql.find(call, at + 1)) {
    auto start = at + call.size();
    auto end = sql.find('\'', start);
    REQUIRE(end != std::string_view::npos);
    out.emplace(sql.substr(start, end - start));
  }
  return out;
}

TEST_CASE("guard.sql refuses in exactly the states whose constraints names.hpp lists") {
  std::set<std::string> ours(std::begin(ss::refusal_states), std::end(ss::refusal_states));
  CHECK(refused_states(ss::sql::guard) == ours);
  std::set<std::string> constraints(std::begin(ss::refusal_constraints), std::end(ss::refusal_constraints));
  std::set<std::string> derived;
  for (auto state : ss::refusal_states) derived.insert("shardctl_" + std::string(state));
  CHECK(constraints == derived);
  // The one place the constraint is built, and the malformed route's.
  CHECK(ss::sql::guard.find("CONSTRAINT = 'shardctl_' || state") != std::string_view::npos);
  CHECK(ss::sql::guard.find(std::string("CONSTRAINT = '") + ss::bad_route_constraint + "'") != std::string_view::npos);
}

TEST_CASE("guard.sql reads the route setting and creates the floor table and assert_route") {
  std::string_view sql = ss::sql::guard;
  CHECK(sql.find(std::string("current_setting('") + ss::route_setting + "', true)") != std::string_view::npos);
  CHECK(sql.find(std::string("CREATE TABLE IF NOT EXISTS ") + ss::route_floors_table + " (") != std::string_view::npos);
  CHECK(sql.find(std::string("REVOKE ALL ON ") + ss::route_floors_table + " FROM PUBLIC") != std::string_view::npos);
  CHECK(sql.find(std::string("GRANT EXECUTE ON FUNCTION ") + ss::assert_route_function + "(text, bigint) TO PUBLIC") !=
        std::string_view::npos);
}

}  // namespace test_shardside_refusals
