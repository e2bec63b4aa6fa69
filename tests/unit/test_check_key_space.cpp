// Unmapped key space and overlaps over ranges.
#include <doctest/doctest.h>

#include <limits>

#include "check/key_space.hpp"

using namespace shardctl;
using namespace shardctl::check;
using routing::KeyRange;
using routing::KeyType;

namespace {
std::string show(const std::vector<KeyRange>& rs) {
  std::string out;
  for (const auto& r : rs) {
    if (!out.empty()) out += ' ';
    out += routing::format_range(r);
  }
  return out;
}
std::vector<KeyRange> ranges(KeyType t, std::initializer_list<std::string> texts) {
  std::vector<KeyRange> out;
  for (auto s : texts) out.push_back(routing::parse_range(t, s));
  return out;
}
}  // namespace

TEST_CASE("no ranges: the whole space is unmapped") {
  CHECK(show(unmapped_ranges(KeyType::int8, {})) == "..");
}

TEST_CASE("covered space has no gap, whatever the order") {
  CHECK(show(unmapped_ranges(KeyType::int8, ranges(KeyType::int8, {"200..", "..100", "100..200"}))) == "");
  CHECK(show(unmapped_ranges(KeyType::int8, ranges(KeyType::int8, {".."}))) == "");
}

TEST_CASE("gaps below, between and above") {
  CHECK(show(unmapped_ranges(KeyType::int8, ranges(KeyType::int8, {"10..20", "30..40"}))) == "..10 20..30 40..");
  CHECK(show(unmapped_ranges(KeyType::int8, ranges(KeyType::int8, {"..20", "20..40", "50.."}))) == "40..50");
}

TEST_CASE("overlapping input still yields exact gaps") {
  CHECK(show(unmapped_ranges(KeyType::int8, ranges(KeyType::int8, {"..50", "10..20", "40..60", "70.."}))) == "60..70");
}

TEST_CASE("the smallest value of the type counts as unbounded below") {
  std::string low_half = std::to_string(std::numeric_limits<std::int64_t>::min());
  low_half += "..0";
  CHECK(show(unmapped_ranges(KeyType::int8, ranges(KeyType::int8, {low_half, "0.."}))) == "");
  CHECK(show(unmapped_ranges(KeyType::int4, ranges(KeyType::int4, {"-2147483648..5", "5.."}))) == "");
  CHECK(show(unmapped_ranges(KeyType::int4, ranges(KeyType::int4, {"-2147483647..5", "5.."}))) == "..-2147483647");
  CHECK(show(unmapped_ranges(KeyType::text, ranges(KeyType::text, {"..m"}))) == "m..");
  CHECK(show(unmapped_ranges(KeyType::uuid, ranges(KeyType::uuid, {"00000000-0000-0000-0000-000000000000..8000"
                                                                  "0000-0000-0000-0000-000000000000",
                                                                  "80000000-0000-0000-0000-000000000000.."}))) == "");
}

TEST_CASE("hash space: the full signed 64-bit range") {
  auto r = ranges(KeyType::int8, {"-9223372036854775808..0", "0..4611686018427387904"});
  CHECK(show(unmapped_ranges(KeyType::int8, r)) == "4611686018427387904..");
}

TEST_CASE("overlapping pairs") {
  auto r = ranges(KeyType::int8, {"..10", "5..20", "20..30", "25.."});
  auto p = overlapping_pairs(r);
  REQUIRE(p.size() == 2);
  CHECK(p[0] == std::pair<std::size_t, std::size_t>{0, 1});
  CHECK(p[1] == std::pair<std::size_t, std::size_t>{2, 3});
  CHECK(overlapping_pairs(ranges(KeyType::int8, {"..10", "10.."})).empty());
}
