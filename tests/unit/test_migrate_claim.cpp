// The key ranges an operation plans with (migrate/claim.hpp): the side of a mapping a split
// moves, the part of a mapping inside a merge's range, and a claim grown over another range;
// unbounded ends on either side.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "migrate/claim.hpp"

// Its own namespace: unit_tests is a unity build, and these helpers must not meet another file's.
namespace test_migrate_claim {

namespace migrate = shardctl::migrate;
namespace routing = shardctl::routing;
using routing::Key;
using routing::KeyRange;

KeyRange claim_range(std::string_view text) { return routing::parse_range(routing::KeyType::int8, text); }
std::string claim_text(const KeyRange& r) { return routing::format_range(r); }

TEST_CASE("a split moves the side of its mapping above or below --at") {
  Key at{std::int64_t{50}};
  CHECK(claim_text(migrate::split_side(claim_range("10..100"), at, true)) == "50..100");
  CHECK(claim_text(migrate::split_side(claim_range("10..100"), at, false)) == "10..50");
  // A mapping open on a side passes that side on to what moves.
  CHECK(claim_text(migrate::split_side(claim_range(".."), at, true)) == "50..");
  CHECK(claim_text(migrate::split_side(claim_range(".."), at, false)) == "..50");
  CHECK(claim_text(migrate::split_side(claim_range("..100"), at, true)) == "50..100");
}

TEST_CASE("the part of a mapping inside a merge's range") {
  CHECK(claim_text(migrate::part_within(claim_range("0..100"), claim_range("50..200"))) == "50..100");
  CHECK(claim_text(migrate::part_within(claim_range("50..200"), claim_range("0..100"))) == "50..100");
  CHECK(claim_text(migrate::part_within(claim_range("0..100"), claim_range("20..30"))) == "20..30");  // inside
  CHECK(claim_text(migrate::part_within(claim_range("20..30"), claim_range("0..100"))) == "20..30");
}

TEST_CASE("an unbounded end of one range gives way to the other's bound") {
  CHECK(claim_text(migrate::part_within(claim_range(".."), claim_range("5..10"))) == "5..10");
  CHECK(claim_text(migrate::part_within(claim_range("..10"), claim_range("5.."))) == "5..10");
  CHECK(claim_text(migrate::part_within(claim_range("5.."), claim_range("..10"))) == "5..10");
  CHECK(claim_text(migrate::part_within(claim_range("3.."), claim_range("5.."))) == "5..");
  CHECK(claim_text(migrate::part_within(claim_range(".."), claim_range(".."))) == "..");
}

TEST_CASE("a claim grows to the lowest low and the highest high") {
  CHECK(claim_text(migrate::span_of(claim_range("0..10"), claim_range("20..30"))) == "0..30");
  CHECK(claim_text(migrate::span_of(claim_range("20..30"), claim_range("0..10"))) == "0..30");
  CHECK(claim_text(migrate::span_of(claim_range("0..100"), claim_range("20..30"))) == "0..100");
}

TEST_CASE("a claim grown over an unbounded end stays unbounded there") {
  CHECK(claim_text(migrate::span_of(claim_range("..10"), claim_range("20..30"))) == "..30");
  CHECK(claim_text(migrate::span_of(claim_range("20..30"), claim_range("..10"))) == "..30");
  CHECK(claim_text(migrate::span_of(claim_range("0..10"), claim_range("20.."))) == "0..");
  CHECK(claim_text(migrate::span_of(claim_range("..10"), claim_range("20.."))) == "..");
}

TEST_CASE("text bounds compare bytewise") {
  KeyRange upper{Key{std::string("a")}, std::nullopt};  // every key from "a" on
  KeyRange capitals{Key{std::string("A")}, Key{std::string("Z")}};
  KeyRange both = migrate::span_of(upper, capitals);
  CHECK(both.low == Key{std::string("A")});  // "A" (0x41) sorts before "a" (0x61)
  CHECK_FALSE(both.high);
  KeyRange part = migrate::part_within(KeyRange{Key{std::string("M")}, Key{std::string("n")}}, upper);
  CHECK(part.low == Key{std::string("a")});
  CHECK(part.high == Key{std::string("n")});
}

}  // namespace test_migrate_claim
