#include <doctest/doctest.h>

#include "core/error.hpp"
#include "routing/pg_hash.hpp"
#include "routing/router.hpp"

using namespace shardctl;
using namespace shardctl::routing;

namespace {
MappingEntry range_entry(KeyType t, const char* range, int shard, bool online = true) {
  return MappingEntry{parse_range(t, range), false, shard, online};
}
MappingEntry point_entry(KeyType t, const char* key, int shard) {
  return MappingEntry{KeyRange{parse_key(t, key), std::nullopt}, true, shard, true};
}
int shard_of(const Router& r, std::string_view key) {
  auto route = r.route_text(key);
  return route ? route->shard_index : -1;
}
}  // namespace

TEST_CASE("range router: edges are half-open, gaps are unmapped") {
  auto r = make_router(MapKind::range, KeyType::int8,
                       {range_entry(KeyType::int8, "100..200", 1), range_entry(KeyType::int8, "..100", 0),
                        range_entry(KeyType::int8, "300..", 2, false)});
  CHECK(shard_of(*r, "-9223372036854775808") == 0);
  CHECK(shard_of(*r, "99") == 0);
  CHECK(shard_of(*r, "100") == 1);
  CHECK(shard_of(*r, "199") == 1);
  CHECK(shard_of(*r, "200") == -1);
  CHECK(shard_of(*r, "299") == -1);
  CHECK(shard_of(*r, "300") == 2);
  CHECK_FALSE(r->route_text("300")->online);
  CHECK(shard_of(*r, "9223372036854775807") == 2);
  CHECK_THROWS_AS(r->route_text("x"), Error);
  CHECK(r->route(Key{std::int64_t{150}})->shard_index == 1);
}

TEST_CASE("range router over text and uuid keys") {
  auto t = make_router(MapKind::range, KeyType::text,
                       {range_entry(KeyType::text, "..a", 0), range_entry(KeyType::text, "a..n", 1),
                        range_entry(KeyType::text, "n..", 2)});
  CHECK(shard_of(*t, "Zebra") == 0);
  CHECK(shard_of(*t, "") == 0);
  CHECK(shard_of(*t, "a") == 1);
  CHECK(shard_of(*t, "mzzz") == 1);
  CHECK(shard_of(*t, "n") == 2);
  CHECK(shard_of(*t, "\xc3\xa9") == 2);
  auto u = make_router(MapKind::range, KeyType::uuid,
                       {range_entry(KeyType::uuid, "..80000000-0000-0000-0000-000000000000", 0),
                        range_entry(KeyType::uuid, "80000000-0000-0000-0000-000000000000..", 1)});
  CHECK(shard_of(*u, "7fffffff-ffff-ffff-ffff-ffffffffffff") == 0);
  CHECK(shard_of(*u, "80000000000000000000000000000000") == 1);
  CHECK_THROWS_AS(u->route_text("nope"), Error);
}

TEST_CASE("list router for every key type") {
  auto i = make_router(MapKind::list, KeyType::int4, {point_entry(KeyType::int4, "7", 3)});
  CHECK(shard_of(*i, "7") == 3);
  CHECK(shard_of(*i, "8") == -1);
  CHECK_THROWS_AS(i->route_text("2147483648"), Error);
  auto t = make_router(MapKind::list, KeyType::text,
                       {point_entry(KeyType::text, "acme", 0), point_entry(KeyType::text, "", 1)});
  CHECK(shard_of(*t, "acme") == 0);
  CHECK(shard_of(*t, "") == 1);
  CHECK(shard_of(*t, "Acme") == -1);
  auto u = make_router(MapKind::list, KeyType::uuid,
                       {point_entry(KeyType::uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 2)});
  CHECK(shard_of(*u, "{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}") == 2);
  CHECK_THROWS_AS(make_router(MapKind::list, KeyType::int8,
                              {point_entry(KeyType::int8, "1", 0), point_entry(KeyType::int8, "1", 1)}),
                  Error);
}

TEST_CASE("hash router routes by the hash value of the key") {
  auto h = make_router(MapKind::hash, KeyType::int8,
                       {range_entry(KeyType::int8, "..0", 0), range_entry(KeyType::int8, "0..", 1)});
  for (const char* k : {"0", "1", "-1", "42", "123456789"}) {
    auto expect = pg_hashint8extended(std::stoll(k)) < 0 ? 0 : 1;
    CHECK(shard_of(*h, k) == expect);
  }
  auto t = make_router(MapKind::hash, KeyType::text,
                       {range_entry(KeyType::int8, "..0", 0), range_entry(KeyType::int8, "0..", 1)});
  CHECK(shard_of(*t, "acme") == (pg_hashtextextended("acme") < 0 ? 0 : 1));
}

TEST_CASE("overlapping entries are refused") {
  CHECK_THROWS_AS(make_router(MapKind::range, KeyType::int8,
                              {range_entry(KeyType::int8, "0..10", 0), range_entry(KeyType::int8, "5..15", 1)}),
                  Error);
  CHECK_THROWS_AS(make_router(MapKind::range, KeyType::int8,
                              {range_entry(KeyType::int8, "..", 0), range_entry(KeyType::int8, "5..15", 1)}),
                  Error);
}
