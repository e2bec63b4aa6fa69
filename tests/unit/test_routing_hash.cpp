// Known values computed by a PostgreSQL 15.18 server (SELECT hashint8extended(42, 0) etc.); the
// 100,000-key comparison against a live server is tests/integration/itest_routing_hash.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "routing/pg_hash.hpp"

using namespace shardctl::routing;

namespace {
Uuid uuid(const char* text) { return std::get<Uuid>(parse_key(KeyType::uuid, text)); }
}  // namespace

TEST_CASE("hashint4extended(v, 0)") {
  CHECK(pg_hashint4extended(0) == 4154612158245552303LL);
  CHECK(pg_hashint4extended(1) == -3670598878359251130LL);
  CHECK(pg_hashint4extended(-1) == -1888257769727981238LL);
  CHECK(pg_hashint4extended(42) == 8010225493015854792LL);
  CHECK(pg_hashint4extended(INT32_MAX) == -9109110466470504941LL);
  CHECK(pg_hashint4extended(INT32_MIN) == 1977219185673256887LL);
}

TEST_CASE("hashint8extended(v, 0)") {
  CHECK(pg_hashint8extended(0) == 4154612158245552303LL);
  CHECK(pg_hashint8extended(1) == -3670598878359251130LL);
  CHECK(pg_hashint8extended(-1) == -1888257769727981238LL);
  CHECK(pg_hashint8extended(42) == 8010225493015854792LL);
  CHECK(pg_hashint8extended(4294967296LL) == -3670598878359251130LL);   // 2^32 folds to 1
  CHECK(pg_hashint8extended(-4294967296LL) == 4154612158245552303LL);   // folds to 0
  CHECK(pg_hashint8extended(2147483648LL) == 1977219185673256887LL);
  CHECK(pg_hashint8extended(INT64_MAX) == 1977219185673256887LL);
  CHECK(pg_hashint8extended(INT64_MIN) == -9109110466470504941LL);
}

TEST_CASE("hashint8 folds values that fit in int4 to hash like int4") {
  for (std::int64_t v : {0LL, 1LL, -1LL, 12345LL, -12345LL, 2147483647LL, -2147483648LL})
    CHECK(pg_hashint8extended(v) == pg_hashint4extended(static_cast<std::int32_t>(v)));
}

TEST_CASE("hashtextextended(v, 0) with a deterministic collation") {
  CHECK(pg_hashtextextended("") == -6939563903564495251LL);
  CHECK(pg_hashtextextended("a") == 3591986179850072241LL);
  CHECK(pg_hashtextextended("hello world") == 6947366892317592103LL);
  CHECK(pg_hashtextextended("acme") == 7757017307627438190LL);
  CHECK(pg_hashtextextended("globex") == -4943828269228750896LL);
  CHECK(pg_hashtextextended("a..b") == 1026258424015157604LL);
  // 11, 12 and 13 bytes: a full tail, exactly one 12-byte block, a block plus one byte.
  CHECK(pg_hashtextextended("abcdefghijk") == 3112909444737856467LL);
  CHECK(pg_hashtextextended("abcdefghijkl") == -7556637188122330412LL);
  CHECK(pg_hashtextextended("abcdefghijklm") == 8871624171452417744LL);
  CHECK(pg_hashtextextended(std::string(100, 'x')) == -6927006773748011226LL);
  CHECK(pg_hashtextextended("h\xc3\xa9llo w\xc3\xb6rld \xe2\x82\xac") == 5830079649815690743LL);  // héllo wörld €
  CHECK(pg_hashtextextended("\xf0\x9f\x98\x80") == -9149796522330800166LL);                      // U+1F600
}

TEST_CASE("the text hash does not depend on where the bytes sit in memory") {
  // PostgreSQL reads whole words when the key is aligned and bytes otherwise; both must agree.
  const std::string key = "the quick brown fox jumps";
  char buffer[64];
  for (std::size_t offset = 0; offset < 8; ++offset) {
    std::memcpy(buffer + offset, key.data(), key.size());
    CHECK(pg_hashtextextended(std::string_view(buffer + offset, key.size())) == pg_hashtextextended(key));
  }
}

TEST_CASE("uuid_hash_extended(v, 0)") {
  CHECK(pg_uuid_hash_extended(uuid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")) == 7543054272012930821LL);
  CHECK(pg_uuid_hash_extended(uuid("00000000-0000-0000-0000-000000000000")) == -6859010066814654381LL);
  CHECK(pg_uuid_hash_extended(uuid("ffffffff-ffff-ffff-ffff-ffffffffffff")) == 293445543803463785LL);
  CHECK(pg_uuid_hash_extended(uuid("123e4567-e89b-12d3-a456-426614174000")) == -1647950126005018481LL);
}

TEST_CASE("hash_key picks the function of the key type") {
  CHECK(hash_key(KeyType::int4, Key{std::int64_t{42}}) == 8010225493015854792LL);
  CHECK(hash_key(KeyType::int8, Key{std::int64_t{4294967296LL}}) == -3670598878359251130LL);
  CHECK(hash_key(KeyType::text, Key{std::string("acme")}) == 7757017307627438190LL);
  CHECK(hash_key(KeyType::uuid, Key{uuid("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")}) == 7543054272012930821LL);
}

TEST_CASE("hash SQL expressions name the server's functions") {
  CHECK(hash_sql_expression(KeyType::int4, "\"k\"") == "hashint4extended(\"k\", 0)");
  CHECK(hash_sql_expression(KeyType::int8, "\"customer_id\"") == "hashint8extended(\"customer_id\", 0)");
  CHECK(hash_sql_expression(KeyType::text, "t.\"k\"") == "hashtextextended(t.\"k\", 0)");
  CHECK(hash_sql_expression(KeyType::uuid, "\"k\"") == "uuid_hash_extended(\"k\", 0)");
}
