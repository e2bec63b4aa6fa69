// Known values computed by a PostgreSQL 15 server (SELECT hashint8extended(42, 0) etc.); the
// 100,000-key comparison against a live server is tests/integration/itest_routing_hash.cpp.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "routing/pg_hash.hpp"

using namespace shardctl::routing;

TEST_CASE("hash values match PostgreSQL 15") {
  CHECK(pg_hashint4extended(0) == 4154612158245552303LL);
  CHECK(pg_hashint4extended(1) == -3670598878359251130LL);
  CHECK(pg_hashint4extended(-1) == -1888257769727981238LL);
  CHECK(pg_hashint4extended(2147483647) == -9109110466470504941LL);
  CHECK(pg_hashint4extended(-2147483647 - 1) == 1977219185673256887LL);
  CHECK(pg_hashint8extended(4294967296LL) == -3670598878359251130LL);  // folds to 1
  CHECK(pg_hashint8extended(INT64_MAX) == 1977219185673256887LL);
  CHECK(pg_hashint8extended(INT64_MIN) == -9109110466470504941LL);
  CHECK(pg_hashtextextended("") == -6939563903564495251LL);
  CHECK(pg_hashtextextended("a") == 3591986179850072241LL);
  CHECK(pg_hashtextextended("hello world") == 6947366892317592103LL);
  CHECK(pg_hashtextextended(std::string(100, 'x')) == -6927006773748011226LL);
  CHECK(pg_hashtextextended("h\xc3\xa9llo w\xc3\xb6rld \xe2\x82\xac") == 5830079649815690743LL);
  CHECK(pg_hashtextextended("acme") == 7757017307627438190LL);
  CHECK(pg_hashtextextended("globex") == -4943828269228750896LL);
  CHECK(pg_uuid_hash_extended(std::get<Uuid>(parse_key(KeyType::uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"))) ==
        7543054272012930821LL);
  CHECK(pg_uuid_hash_extended(Uuid{}) == -6859010066814654381LL);
}

TEST_CASE("hashint8 folds small values to hash like int4") {
  for (std::int64_t v : {0LL, 1LL, -1LL, 2147483647LL, -2147483648LL, 12345LL})
    CHECK(pg_hashint8extended(v) == pg_hashint4extended(static_cast<std::int32_t>(v)));
}

TEST_CASE("hash SQL expressions name the server's functions") {
  CHECK(hash_sql_expression(KeyType::int4, "\"k\"") == "hashint4extended(\"k\", 0)");
  CHECK(hash_sql_expression(KeyType::int8, "\"k\"") == "hashint8extended(\"k\", 0)");
  CHECK(hash_sql_expression(KeyType::text, "\"k\"") == "hashtextextended(\"k\", 0)");
  CHECK(hash_sql_expression(KeyType::uuid, "\"k\"") == "uuid_hash_extended(\"k\", 0)");
}
