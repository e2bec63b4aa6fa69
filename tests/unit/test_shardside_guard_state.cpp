// A guard range's state (shardside/guard_state.hpp): its words are exactly those the CHECK of
// shardctl.guard_ranges.state allows in the embedded sql/guard.sql, and an unknown word read
// from a shard is an internal error naming it.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "shardside/guard_state.hpp"
#include "shardside/sql.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_shardside_guard_state {

namespace ss = shardctl::shardside;

// The quoted words of the first "CHECK (state IN (...))" in the SQL text.
std::set<std::string> check_words(std::string_view sql) {
  constexpr std::string_view marker = "CHECK (state IN (";
  auto at = sql.find(marker);
  REQUIRE(at != std::string_view::npos);
  auto end = sql.find("))", at);
  REQUIRE(end != std::string_view::npos);
  std::set<std::string> out;
  std::string_view list = sql.substr(at + marker.size(), end - at - marker.size());
  for (auto q = list.find('\''); q != std::string_view::npos; q = list.find('\'', q + 1)) {
    auto close = list.find('\'', q + 1);
    REQUIRE(close != std::string_view::npos);
    out.emplace(list.substr(q + 1, close - q - 1));
    q = close;
  }
  return out;
}

TEST_CASE("the guard state words are the CHECK's of shardctl.guard_ranges.state") {
  std::set<std::string> ours;
  for (const auto& [state, word] : ss::guard_state_words.entries()) {
    CHECK(ss::guard_state_words.find(word) == state);
    ours.emplace(word);
  }
  CHECK(ours == std::set<std::string>{"offline", "fenced", "cutover"});
  CHECK(check_words(ss::sql::guard) == ours);
}

TEST_CASE("an unknown guard state from a shard is an internal error naming it") {
  try {
    ss::guard_state_words.read("Fenced", "guard range state", "shardctl.guard_ranges");
    FAIL("accepted 'Fenced'");
  } catch (const shardctl::Error& e) {
    CHECK(e.kind() == shardctl::ErrorKind::internal);
    CHECK(std::string(e.what()) == "unknown guard range state 'Fenced' in shardctl.guard_ranges");
  }
}

}  // namespace test_shardside_guard_state
