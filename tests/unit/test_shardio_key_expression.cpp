// The key expressions server-side statements compare: text keys hash and order as bytes
// (COLLATE "C") unless the column's own collation is known to give the same answers; the
// integration test t_collation_keys runs them against columns in ICU collations.
#include <doctest/doctest.h>

#include "shardio/key_filter.hpp"

using namespace shardctl::shardio;
using shardctl::routing::KeyType;
using shardctl::routing::MapKind;

TEST_CASE("text keys are hashed and compared under COLLATE \"C\" by default") {
  CHECK(route_expression({MapKind::hash, KeyType::text}, "t0.\"k\"") == "hashtextextended(t0.\"k\" COLLATE \"C\", 0)");
  CHECK(route_expression({MapKind::range, KeyType::text}, "\"k\"") == "\"k\" COLLATE \"C\"");
  CHECK(route_expression({MapKind::list, KeyType::text}, "\"k\"") == "\"k\" COLLATE \"C\"");
  CHECK(key_expression({MapKind::hash, KeyType::text}, KeyColumn{"\"k\"", false}) == "hashtextextended(\"k\" COLLATE \"C\", 0)");
}

TEST_CASE("a column whose own collation fits is compared as written, so its plain indexes serve") {
  CHECK(key_expression({MapKind::hash, KeyType::text}, KeyColumn{"\"k\"", true}) == "hashtextextended(\"k\", 0)");
  CHECK(key_expression({MapKind::range, KeyType::text}, KeyColumn{"\"k\"", true}) == "\"k\"");
}

TEST_CASE("keys of other types take no collation") {
  CHECK(route_expression({MapKind::hash, KeyType::int8}, "\"k\"") == "hashint8extended(\"k\", 0)");
  CHECK(route_expression({MapKind::hash, KeyType::uuid}, "\"k\"") == "uuid_hash_extended(\"k\", 0)");
  CHECK(route_expression({MapKind::range, KeyType::uuid}, "\"k\"") == "\"k\"");
  CHECK(key_expression({MapKind::range, KeyType::int4}, KeyColumn{"\"k\"", false}) == "\"k\"");
}
