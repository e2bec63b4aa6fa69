// Routers of every map kind and key type: edges (low inclusive, high exclusive), gaps, unmapped
// keys, refused entries, and a randomized comparison against a linear scan (no database).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "routing/hash_space.hpp"
#include "routing/pg_hash.hpp"
#include "routing/router.hpp"
#include "support.hpp"

using namespace shardctl;
using namespace shardctl::routing;

namespace {

MappingEntry range_entry(KeyType t, const char* range, int shard, bool online = true) {
  return MappingEntry{parse_range(t, range), false, shard, online};
}
MappingEntry point_entry(KeyType t, const char* key, int shard, bool online = true) {
  return MappingEntry{KeyRange{parse_key(t, key), std::nullopt}, true, shard, online};
}
// The shard a key text routes to, -1 when unmapped.
int shard_of(const Router& r, std::string_view key) {
  auto route = r.route_text(key);
  return route ? route->shard_index : -1;
}
std::string data_error_of(MapKind kind, KeyType type, std::vector<MappingEntry> entries) {
  return test::data_error_of([&] { make_router(kind, type, std::move(entries)); });
}
std::string usage_error_of(const Router& r, std::string_view key) {
  return test::usage_error_of([&] { r.route_text(key); });
}

}  // namespace

TEST_CASE("bigint range map: low inclusive, high exclusive, gaps unmapped") {
  auto r = make_router(MapKind::range, KeyType::int8,
                       {range_entry(KeyType::int8, "100..200", 1), range_entry(KeyType::int8, "..100", 0),
                        range_entry(KeyType::int8, "300..", 2, false), range_entry(KeyType::int8, "200..201", 3)});
  CHECK(shard_of(*r, "-9223372036854775808") == 0);
  CHECK(shard_of(*r, "99") == 0);
  CHECK(shard_of(*r, "100") == 1);
  CHECK(shard_of(*r, "199") == 1);
  CHECK(shard_of(*r, "200") == 3);
  CHECK(shard_of(*r, "201") == -1);
  CHECK(shard_of(*r, "299") == -1);
  CHECK(shard_of(*r, "300") == 2);
  CHECK(shard_of(*r, "9223372036854775807") == 2);
  CHECK(r->route_text("100")->online);
  CHECK_FALSE(r->route_text("300")->online);
  CHECK(r->route(Key{std::int64_t{150}})->shard_index == 1);
  CHECK_FALSE(r->route(Key{std::int64_t{250}}).has_value());
  CHECK(usage_error_of(*r, "x") == "'x' is not a valid bigint key");
  CHECK(usage_error_of(*r, "") == "'' is not a valid bigint key");
  CHECK(usage_error_of(*r, "9223372036854775808") != "");
  CHECK_THROWS_AS(r->route(Key{std::string("150")}), Error);
}

TEST_CASE("range map with bounded ends only: below the first and from the last high are unmapped") {
  auto r = make_router(MapKind::range, KeyType::int4, {range_entry(KeyType::int4, "-5..5", 7)});
  CHECK(shard_of(*r, "-2147483648") == -1);
  CHECK(shard_of(*r, "-6") == -1);
  CHECK(shard_of(*r, "-5") == 7);
  CHECK(shard_of(*r, "4") == 7);
  CHECK(shard_of(*r, "5") == -1);
  CHECK(shard_of(*r, "2147483647") == -1);
  CHECK(usage_error_of(*r, "2147483648") == "'2147483648' is not a valid int key");
  CHECK_THROWS_AS(r->route(Key{std::int64_t{1} << 40}), Error);  // not an int key
}

TEST_CASE("maps without mappings route nothing") {
  for (MapKind kind : {MapKind::list, MapKind::range, MapKind::hash}) {
    CHECK_FALSE(make_router(kind, KeyType::int8, {})->route_text("1").has_value());
    CHECK_FALSE(make_router(kind, KeyType::text, {})->route_text("").has_value());
    CHECK_FALSE(make_router(kind, KeyType::uuid, {})->route_text("00000000000000000000000000000000").has_value());
  }
}

TEST_CASE("text range map: bytewise edges, empty text, non-ASCII") {
  auto t = make_router(MapKind::range, KeyType::text,
                       {range_entry(KeyType::text, "..a", 0), range_entry(KeyType::text, "a..n", 1),
                        range_entry(KeyType::text, "n..", 2)});
  CHECK(shard_of(*t, "") == 0);
  CHECK(shard_of(*t, "Zebra") == 0);
  CHECK(shard_of(*t, "a") == 1);
  CHECK(shard_of(*t, "mzzz") == 1);
  CHECK(shard_of(*t, "n") == 2);
  CHECK(shard_of(*t, "\xc3\xa9") == 2);
  CHECK(shard_of(*t, "a..b") == 1);
  CHECK(usage_error_of(*t, std::string_view("a\0", 2)) == "a text key cannot contain a NUL byte");

  auto bounded = make_router(MapKind::range, KeyType::text, {range_entry(KeyType::text, "b..bb", 4)});
  CHECK(shard_of(*bounded, "") == -1);
  CHECK(shard_of(*bounded, "a") == -1);
  CHECK(shard_of(*bounded, "b") == 4);
  CHECK(shard_of(*bounded, "ba") == 4);
  CHECK(shard_of(*bounded, "bb") == -1);
  CHECK(bounded->route(Key{std::string("b\x01")})->shard_index == 4);
}

TEST_CASE("uuid range map: bytewise edges") {
  auto u = make_router(MapKind::range, KeyType::uuid,
                       {range_entry(KeyType::uuid, "..80000000-0000-0000-0000-000000000000", 0),
                        range_entry(KeyType::uuid, "80000000-0000-0000-0000-000000000000..", 1)});
  CHECK(shard_of(*u, "00000000-0000-0000-0000-000000000000") == 0);
  CHECK(shard_of(*u, "7fffffff-ffff-ffff-ffff-ffffffffffff") == 0);
  CHECK(shard_of(*u, "80000000000000000000000000000000") == 1);
  CHECK(shard_of(*u, "{FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF}") == 1);
  CHECK(usage_error_of(*u, "nope") == "'nope' is not a valid uuid key");

  auto gap = make_router(MapKind::range, KeyType::uuid,
                         {range_entry(KeyType::uuid,
                                      "00000000-0000-0000-0000-0000000000ff..00000000-0000-0000-0000-000000000100", 0)});
  CHECK(shard_of(*gap, "00000000-0000-0000-0000-0000000000fe") == -1);
  CHECK(shard_of(*gap, "00000000-0000-0000-0000-0000000000ff") == 0);
  CHECK(shard_of(*gap, "00000000-0000-0000-0000-000000000100") == -1);
}

TEST_CASE("list maps for every key type") {
  auto i = make_router(MapKind::list, KeyType::int4,
                       {point_entry(KeyType::int4, "7", 3), point_entry(KeyType::int4, "-2147483648", 1),
                        point_entry(KeyType::int4, "2147483647", 2, false)});
  CHECK(shard_of(*i, "7") == 3);
  CHECK(shard_of(*i, "8") == -1);
  CHECK(shard_of(*i, "-2147483648") == 1);
  CHECK_FALSE(i->route_text("2147483647")->online);
  CHECK(usage_error_of(*i, "2147483648") == "'2147483648' is not a valid int key");

  auto b = make_router(MapKind::list, KeyType::int8,
                       {point_entry(KeyType::int8, "9223372036854775807", 0), point_entry(KeyType::int8, "0", 1)});
  CHECK(shard_of(*b, "9223372036854775807") == 0);
  CHECK(shard_of(*b, "0") == 1);
  CHECK(shard_of(*b, "-0") == 1);
  CHECK(shard_of(*b, "1") == -1);
  CHECK(b->route(Key{std::int64_t{0}})->shard_index == 1);

  auto t = make_router(MapKind::list, KeyType::text,
                       {point_entry(KeyType::text, "acme", 0), point_entry(KeyType::text, "", 1),
                        point_entry(KeyType::text, "h\xc3\xa9", 2)});
  CHECK(shard_of(*t, "acme") == 0);
  CHECK(shard_of(*t, "") == 1);
  CHECK(shard_of(*t, "h\xc3\xa9") == 2);
  CHECK(shard_of(*t, "Acme") == -1);
  CHECK(shard_of(*t, "acme ") == -1);
  CHECK(t->route(Key{std::string("acme")})->shard_index == 0);

  auto u = make_router(MapKind::list, KeyType::uuid,
                       {point_entry(KeyType::uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 2)});
  CHECK(shard_of(*u, "{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}") == 2);
  CHECK(shard_of(*u, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12") == -1);
  CHECK(usage_error_of(*u, "a0eebc99") == "'a0eebc99' is not a valid uuid key");
}

TEST_CASE("hash maps route by the key's PostgreSQL hash, for every key type") {
  // Two buckets split at hash 0; a negative hash goes to shard 0.
  std::vector<MappingEntry> halves = {range_entry(KeyType::int8, "..0", 0), range_entry(KeyType::int8, "0..", 1)};
  auto side = [](std::int64_t hash) { return hash < 0 ? 0 : 1; };

  auto i = make_router(MapKind::hash, KeyType::int4, halves);
  for (std::int32_t k : {0, 1, -1, 42, INT32_MIN, INT32_MAX})
    CHECK(shard_of(*i, std::to_string(k)) == side(pg_hashint4extended(k)));
  CHECK(usage_error_of(*i, "2147483648") == "'2147483648' is not a valid int key");

  auto b = make_router(MapKind::hash, KeyType::int8, halves);
  for (std::int64_t k : std::vector<std::int64_t>{0, 1, -1, 42, 123456789, INT64_MIN, INT64_MAX})
    CHECK(shard_of(*b, std::to_string(k)) == side(pg_hashint8extended(k)));
  CHECK(b->route(Key{std::int64_t{42}})->shard_index == side(pg_hashint8extended(42)));

  auto t = make_router(MapKind::hash, KeyType::text, halves);
  for (const char* k : {"", "acme", "globex", "h\xc3\xa9llo"})
    CHECK(shard_of(*t, k) == side(pg_hashtextextended(k)));

  auto u = make_router(MapKind::hash, KeyType::uuid, halves);
  for (const char* k : {"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "00000000-0000-0000-0000-000000000000"})
    CHECK(shard_of(*u, k) == side(pg_uuid_hash_extended(std::get<Uuid>(parse_key(KeyType::uuid, k)))));

  // Known server values: hashint8extended(42, 0) = 8010225493015854792 lies in [8e18, ..).
  auto edge = make_router(MapKind::hash, KeyType::int8,
                          {range_entry(KeyType::int8, "8010225493015854792..8010225493015854793", 5)});
  CHECK(shard_of(*edge, "42") == 5);
  CHECK(shard_of(*edge, "43") == -1);
  auto below = make_router(MapKind::hash, KeyType::int8, {range_entry(KeyType::int8, "..8010225493015854792", 5)});
  CHECK(shard_of(*below, "42") == -1);  // the high bound is exclusive for hash values too
}

TEST_CASE("overlapping entries are refused") {
  auto R = [](const char* r, int shard) { return range_entry(KeyType::int8, r, shard); };
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("0..10", 0), R("5..15", 1)}) ==
        "mappings 0..10 and 5..15 overlap");
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("5..15", 1), R("0..10", 0)}) ==
        "mappings 0..10 and 5..15 overlap");  // reported in key order, whatever the input order
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("..", 0), R("5..15", 1)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("..5", 0), R("..1", 1)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("5..", 0), R("100..", 1)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("0..10", 0), R("0..10", 1)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("0..100", 0), R("10..20", 1), R("30..40", 2)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("-9223372036854775808..0", 0), R("..-5", 1)}) != "");
  CHECK(data_error_of(MapKind::hash, KeyType::text, {R("..0", 0), R("-1..", 1)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::text,
                      {range_entry(KeyType::text, "a..c", 0), range_entry(KeyType::text, "bzz..d", 1)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::text,
                      {range_entry(KeyType::text, "..b", 0), range_entry(KeyType::text, "\x01..c", 1)}) != "");
  // Touching ranges do not overlap.
  CHECK(data_error_of(MapKind::range, KeyType::int8, {R("10..20", 1), R("..10", 0), R("20..", 2)}) == "");
  // Duplicate points, also when spelled differently.
  CHECK(data_error_of(MapKind::list, KeyType::int8, {point_entry(KeyType::int8, "1", 0),
                                                     point_entry(KeyType::int8, "01", 1)}) == "point 1 is mapped twice");
  CHECK(data_error_of(MapKind::list, KeyType::text,
                      {point_entry(KeyType::text, "", 0), point_entry(KeyType::text, "", 1)}) != "");
  CHECK(data_error_of(MapKind::list, KeyType::uuid,
                      {point_entry(KeyType::uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 0),
                       point_entry(KeyType::uuid, "A0EEBC999C0B4EF8BB6D6BB9BD380A11", 1)}) != "");
}

TEST_CASE("entries that do not fit the map are refused") {
  // A range in a list map, a point in a range or hash map.
  CHECK(data_error_of(MapKind::list, KeyType::int8, {range_entry(KeyType::int8, "0..10", 0)}) ==
        "a list map holds only points, not the range 0..10");
  CHECK(data_error_of(MapKind::range, KeyType::int8, {point_entry(KeyType::int8, "5", 0)}) ==
        "a range map holds only ranges, not the point 5");
  CHECK(data_error_of(MapKind::hash, KeyType::int8, {point_entry(KeyType::int8, "5", 0)}) != "");
  // Bounds of another type: hash bounds are bigint hash values whatever the key type.
  CHECK(data_error_of(MapKind::hash, KeyType::text, {range_entry(KeyType::text, "a..b", 0)}) ==
        "bound 'a' of mapping a..b is not a valid bigint hash value");
  CHECK(data_error_of(MapKind::range, KeyType::text, {range_entry(KeyType::int8, "1..2", 0)}) != "");
  CHECK(data_error_of(MapKind::range, KeyType::int4, {range_entry(KeyType::int8, "0..4294967296", 0)}) != "");
  CHECK(data_error_of(MapKind::list, KeyType::uuid, {point_entry(KeyType::text, "x", 0)}) ==
        "point 'x' is not a valid uuid key");
  // Empty ranges, which parse_range would refuse but a caller may build by hand.
  MappingEntry empty{KeyRange{Key{std::int64_t{5}}, Key{std::int64_t{5}}}, false, 0, true};
  CHECK(data_error_of(MapKind::range, KeyType::int8, {empty}) ==
        "mapping 5..5 is empty: its low bound must be below its high bound");
  MappingEntry no_point{KeyRange{}, true, 0, true};
  CHECK(data_error_of(MapKind::list, KeyType::int8, {no_point}) != "");
}

TEST_CASE("even hash buckets route every key somewhere") {
  std::vector<MappingEntry> buckets;
  int shard = 0;
  for (auto& r : even_hash_ranges(16)) buckets.push_back(MappingEntry{r, false, shard++, true});
  auto h = make_router(MapKind::hash, KeyType::int8, buckets);
  for (const char* k : {"0", "-1", "9223372036854775807", "-9223372036854775808", "31337"}) {
    auto route = h->route_text(k);
    REQUIRE(route.has_value());
    auto hash = pg_hashint8extended(std::stoll(k));
    CHECK(range_contains(buckets[static_cast<std::size_t>(route->shard_index)].range, Key{hash}));
  }
}

namespace {

// Routes `keys` through a router built from `entries` and through a linear scan, which must agree.
void check_against_scan(MapKind kind, KeyType type, const std::vector<MappingEntry>& entries,
                        const std::vector<std::string>& keys) {
  auto router = make_router(kind, type, entries);
  for (const auto& text : keys) {
    Key key = parse_key(type, text);
    Key probe = kind == MapKind::hash ? Key{hash_key(type, key)} : key;
    int expected = -1;
    for (const auto& e : entries)
      if (kind == MapKind::list ? compare_keys(*e.range.low, probe) == 0 : range_contains(e.range, probe))
        expected = e.shard_index;
    CAPTURE(text);
    CHECK(shard_of(*router, text) == expected);
    auto direct = router->route(key);
    CHECK((direct ? direct->shard_index : -1) == expected);
  }
}

}  // namespace

TEST_CASE("randomized: every router agrees with a linear scan") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    // Sorted distinct boundaries; consecutive pairs become ranges, some left out as gaps,
    // the first and last sometimes unbounded.
    std::vector<std::int64_t> cuts;
    std::uniform_int_distribution<std::int64_t> small(-500, 500);
    for (int i = 0; i < 1 + round * 3; ++i) cuts.push_back(small(rng));
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::vector<MappingEntry> ranges, points, text_ranges;
    auto keep = [&] { return rng() % 4 != 0; };
    auto word = [](std::int64_t v) {  // order-preserving text for -500..500: "k0500".."k1500"
      std::string digits = std::to_string(v + 1000);
      return std::string("k").append(4 - digits.size(), '0').append(digits);
    };
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
      KeyRange r, tr;
      if (i > 0) {
        r.low.emplace(cuts[i - 1]);
        tr.low.emplace(word(cuts[i - 1]));
      }
      if (i < cuts.size()) {
        r.high.emplace(cuts[i]);
        tr.high.emplace(word(cuts[i]));
      }
      if (keep()) ranges.push_back(MappingEntry{r, false, static_cast<int>(i), true});
      if (keep()) text_ranges.push_back(MappingEntry{tr, false, static_cast<int>(i), true});
      if (i < cuts.size() && keep())
        points.push_back(point_entry(KeyType::int8, std::to_string(cuts[i]).c_str(), static_cast<int>(i)));
    }
    std::shuffle(ranges.begin(), ranges.end(), rng);
    std::vector<std::string> keys, words;
    for (int i = 0; i < 300; ++i) {
      auto v = small(rng);
      keys.push_back(std::to_string(v));
      words.push_back(word(v));
    }
    for (auto c : cuts) keys.push_back(std::to_string(c)), words.push_back(word(c));
    keys.push_back("-9223372036854775808");
    keys.push_back("9223372036854775807");
    words.push_back("");
    check_against_scan(MapKind::range, KeyType::int8, ranges, keys);
    check_against_scan(MapKind::list, KeyType::int8, points, keys);
    check_against_scan(MapKind::range, KeyType::text, text_ranges, words);
    check_against_scan(MapKind::hash, KeyType::int8, ranges, keys);  // cuts read as hash values
  }
}

TEST_CASE("randomized: uuid range and hash maps agree with a linear scan") {
  std::mt19937_64 rng(11);
  auto random_uuid = [&] {
    Uuid u;
    for (auto& b : u) b = static_cast<std::uint8_t>(rng() % 4 == 0 ? 0 : rng());  // shared prefixes
    return u;
  };
  std::vector<Uuid> cuts;
  for (int i = 0; i < 200; ++i) cuts.push_back(random_uuid());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<MappingEntry> ranges;
  for (std::size_t i = 0; i <= cuts.size(); ++i) {
    KeyRange r;
    if (i > 0) r.low = Key{cuts[i - 1]};
    if (i < cuts.size()) r.high = Key{cuts[i]};
    if (i % 5 != 3) ranges.push_back(MappingEntry{r, false, static_cast<int>(i), true});
  }
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(format_key(random_uuid()));
  for (const auto& c : cuts) keys.push_back(format_key(c));
  check_against_scan(MapKind::range, KeyType::uuid, ranges, keys);
  std::vector<MappingEntry> buckets;
  int shard = 0;
  for (auto& r : even_hash_ranges(37)) buckets.push_back(MappingEntry{r, false, shard++, true});
  check_against_scan(MapKind::hash, KeyType::uuid, buckets, keys);
  check_against_scan(MapKind::hash, KeyType::text, buckets, {"", "a", "acme", "0123456789abcdef"});
}
