// Properties of split_key_range (rapidcheck): the parts are contiguous, non-empty, in order,
// and cover exactly the range they were cut from, however wide (a whole bigint space too);
// ranges it cannot cut by arithmetic come back whole.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <limits>

#include "routing/range_split.hpp"

using shardctl::routing::Key;
using shardctl::routing::KeyRange;
using shardctl::routing::KeyType;
using shardctl::routing::split_key_range;

namespace {

std::int64_t low_of(const KeyRange& r) { return std::get<std::int64_t>(*r.low); }
std::int64_t high_of(const KeyRange& r) { return std::get<std::int64_t>(*r.high); }

}  // namespace

TEST_CASE("split_key_range: contiguous parts that cover the range exactly") {
  CHECK(rc::check("bigint ranges", [] {
    auto a = *rc::gen::arbitrary<std::int64_t>();
    auto b = *rc::gen::arbitrary<std::int64_t>();
    if (a == b) return;
    KeyRange r{Key{std::min(a, b)}, Key{std::max(a, b)}};
    int parts = *rc::gen::inRange(1, 40);
    auto out = split_key_range(KeyType::int8, r, parts);
    RC_ASSERT(!out.empty());
    RC_ASSERT(out.size() <= static_cast<std::size_t>(parts));
    RC_ASSERT(low_of(out.front()) == std::min(a, b));
    RC_ASSERT(high_of(out.back()) == std::max(a, b));
    for (std::size_t i = 0; i < out.size(); ++i) {
      RC_ASSERT(low_of(out[i]) < high_of(out[i]));  // non-empty, in order
      if (i > 0) RC_ASSERT(high_of(out[i - 1]) == low_of(out[i]));  // no gap, no overlap
    }
  }));
  CHECK(rc::check("narrow ranges give one part per key at most", [] {
    std::int64_t lo = *rc::gen::inRange<std::int64_t>(-1000, 1000);
    std::int64_t width = *rc::gen::inRange<std::int64_t>(1, 10);
    int parts = *rc::gen::inRange(1, 20);
    auto out = split_key_range(KeyType::int4, KeyRange{Key{lo}, Key{lo + width}}, parts);
    RC_ASSERT(out.size() == static_cast<std::size_t>(std::min<std::int64_t>(parts, width)));
  }));
}

TEST_CASE("split_key_range: even cuts, and what it leaves whole") {
  auto out = split_key_range(KeyType::int8, KeyRange{Key{std::int64_t{0}}, Key{std::int64_t{10}}}, 4);
  REQUIRE(out.size() == 4);
  CHECK(high_of(out[0]) == 3);  // 3, 3, 2, 2 keys
  CHECK(high_of(out[1]) == 6);
  CHECK(high_of(out[2]) == 8);
  auto whole = KeyRange{Key{std::numeric_limits<std::int64_t>::min()}, Key{std::numeric_limits<std::int64_t>::max()}};
  CHECK(split_key_range(KeyType::int8, whole, 8).size() == 8);
  CHECK(split_key_range(KeyType::int8, KeyRange{Key{std::int64_t{5}}, std::nullopt}, 4).size() == 1);
  CHECK(split_key_range(KeyType::int8, KeyRange{std::nullopt, Key{std::int64_t{5}}}, 4).size() == 1);
  CHECK(split_key_range(KeyType::text, KeyRange{Key{std::string("a")}, Key{std::string("z")}}, 4).size() == 1);
  CHECK(split_key_range(KeyType::int8, KeyRange{Key{std::int64_t{5}}, Key{std::int64_t{6}}}, 4).size() == 1);
  CHECK(split_key_range(KeyType::int8, KeyRange{Key{std::int64_t{0}}, Key{std::int64_t{100}}}, 1).size() == 1);
}
