// `shardctl init` upgrades a catalog of every older schema version step by step, keeping its
// data. Builds a version-1 catalog from the version-1 step itself, then upgrades it.
#include <doctest/doctest.h>

#include <cstdlib>

#include "catalog/catalog.hpp"
#include "catalog/schema.hpp"

using namespace shardctl;

TEST_CASE("a version 1 catalog upgrades to the current version with its data") {
  const char* dsn = std::getenv("SHARDCTL_TEST_DSN");
  REQUIRE_MESSAGE(dsn != nullptr, "SHARDCTL_TEST_DSN is not set: run through ctest");
  pg::Connection conn(dsn, "catalog");
  conn.transact([](pqxx::work& tx) {
    tx.exec(std::string(catalog::schema_steps().at(0).sql));
    tx.exec("INSERT INTO shardctl.catalog_version (version) VALUES (1)");
    tx.exec("INSERT INTO shardctl.shards (name, dsn) VALUES ('old', 'dbname=old')");
  });
  auto result = catalog::init_catalog(conn);
  CHECK(result.previous_version == 1);
  CHECK(result.version == catalog::schema_version);
  catalog::Store store(conn);  // accepts the upgraded catalog
  auto shards = store.list_shards();
  REQUIRE(shards.size() == 1);
  CHECK(shards[0].name == "old");
  auto again = catalog::init_catalog(conn);
  CHECK_FALSE(again.changed());
}
