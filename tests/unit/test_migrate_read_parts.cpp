// How the verify cuts a batch's read-back on the target into parts (migrate/read_parts.hpp):
// how many parts it asks for (readers, rows, copy format, map kind) and the parts of the
// batch's key range, open ends included.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "migrate/read_parts.hpp"

// Its own namespace: unit_tests is a unity build, and these helpers must not meet another file's.
namespace test_migrate_read_parts {

namespace migrate = shardctl::migrate;
namespace routing = shardctl::routing;
using routing::Key;
using routing::KeyRange;
using routing::KeyType;
using routing::MapKind;

using Held = std::optional<std::pair<Key, Key>>;

Key int_key(std::int64_t v) { return Key{v}; }

// The parts are contiguous and cover `range` exactly, open ends included.
void check_parts_cover(const std::vector<KeyRange>& parts, const KeyRange& range) {
  REQUIRE(!parts.empty());
  CHECK(parts.front().low == range.low);
  CHECK(parts.back().high == range.high);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    REQUIRE(parts[i].high);
    CHECK(parts[i].high == parts[i + 1].low);
    if (parts[i].low) CHECK(routing::compare_keys(*parts[i].low, *parts[i].high) < 0);
  }
}

TEST_CASE("one reader reads every table whole") {
  CHECK(migrate::read_parts(1, 10'000'000, true, MapKind::range) == 1);
}

TEST_CASE("readers get twice as many parts as there are of them, parts of 500 rows at least") {
  CHECK(migrate::read_parts(4, 100'000, true, MapKind::range) == 8);
  CHECK(migrate::read_parts(4, 1000, true, MapKind::range) == 2);
  CHECK(migrate::read_parts(4, 999, true, MapKind::range) == 1);  // not two parts of 500
  CHECK(migrate::read_parts(4, 0, true, MapKind::range) == 1);
  CHECK(migrate::read_parts(2, 100'000, true, MapKind::list) == 4);
}

TEST_CASE("hash maps and text copies are read whole") {
  // A hash map's filter hashes every row's key: each part would scan the whole batch again.
  CHECK(migrate::read_parts(4, 100'000, true, MapKind::hash) == 1);
  CHECK(migrate::read_parts(4, 100'000, false, MapKind::range) == 1);
}

TEST_CASE("only integer ranges with an open side need the keys the target holds") {
  CHECK_FALSE(migrate::cut_needs_held_keys(KeyType::int8, KeyRange{int_key(0), int_key(10)}));
  CHECK(migrate::cut_needs_held_keys(KeyType::int8, KeyRange{std::nullopt, int_key(10)}));
  CHECK(migrate::cut_needs_held_keys(KeyType::int4, KeyRange{int_key(0), std::nullopt}));
  CHECK(migrate::cut_needs_held_keys(KeyType::int8, KeyRange{}));
  CHECK_FALSE(migrate::cut_needs_held_keys(KeyType::text, KeyRange{}));
  CHECK_FALSE(migrate::cut_needs_held_keys(KeyType::uuid, KeyRange{}));
}

TEST_CASE("a bounded integer range is cut evenly by key value") {
  KeyRange r{int_key(0), int_key(100)};
  auto parts = migrate::cut_for_reads(KeyType::int8, r, 4, std::nullopt);
  REQUIRE(parts.size() == 4);
  check_parts_cover(parts, r);
  CHECK(parts[1].low == int_key(25));
  CHECK(parts[3].low == int_key(75));
}

TEST_CASE("an open side is cut between the keys the target holds, and stays open") {
  KeyRange below{std::nullopt, int_key(100)};
  auto parts = migrate::cut_for_reads(KeyType::int8, below, 3, Held{{int_key(10), int_key(99)}});
  REQUIRE(parts.size() == 3);
  check_parts_cover(parts, below);
  CHECK(parts[1].low == int_key(40));  // [10, 100) in thirds
  CHECK(parts[2].low == int_key(70));

  KeyRange above{int_key(0), std::nullopt};
  parts = migrate::cut_for_reads(KeyType::int4, above, 2, Held{{int_key(0), int_key(9)}});
  REQUIRE(parts.size() == 2);
  check_parts_cover(parts, above);
  CHECK(parts[1].low == int_key(5));  // [0, 10): the highest key held, plus one

  KeyRange everything{};
  parts = migrate::cut_for_reads(KeyType::int8, everything, 2, Held{{int_key(-50), int_key(49)}});
  REQUIRE(parts.size() == 2);
  check_parts_cover(parts, everything);
  CHECK(parts[1].low == int_key(0));
}

TEST_CASE("ranges that cannot be cut by key value are read whole") {
  // An open side where the target holds no key.
  KeyRange below{std::nullopt, int_key(100)};
  auto parts = migrate::cut_for_reads(KeyType::int8, below, 4, std::nullopt);
  REQUIRE(parts.size() == 1);
  check_parts_cover(parts, below);
  // The highest bigint held at an open upper side: it has no successor to end a span at.
  KeyRange above{int_key(0), std::nullopt};
  parts = migrate::cut_for_reads(KeyType::int8, above, 4, Held{{int_key(0), int_key(std::numeric_limits<std::int64_t>::max())}});
  CHECK(parts.size() == 1);
  // One key.
  KeyRange one{int_key(5), int_key(6)};
  parts = migrate::cut_for_reads(KeyType::int8, one, 4, std::nullopt);
  REQUIRE(parts.size() == 1);
  check_parts_cover(parts, one);
  // Text and uuid keys.
  KeyRange text{Key{std::string("a")}, Key{std::string("z")}};
  parts = migrate::cut_for_reads(KeyType::text, text, 4, std::nullopt);
  REQUIRE(parts.size() == 1);
  check_parts_cover(parts, text);
  CHECK(migrate::cut_for_reads(KeyType::uuid, KeyRange{}, 4, std::nullopt).size() == 1);
}

TEST_CASE("a range narrower than the parts asked for is cut into single keys") {
  KeyRange r{int_key(7), int_key(10)};
  auto parts = migrate::cut_for_reads(KeyType::int8, r, 8, std::nullopt);
  REQUIRE(parts.size() == 3);
  check_parts_cover(parts, r);
}

}  // namespace test_migrate_read_parts
