// An archive predicate is refused before anything changes when it does not parse, names a
// missing column, or reads another table; a valid one passes. Nothing it names is executed.
#include <doctest/doctest.h>

#include <cstdlib>

#include "archive/predicate.hpp"
#include "core/error.hpp"

using namespace shardctl;

namespace {
std::string refusal(pg::Connection& c, const std::string& table, const std::string& where) {
  try {
    archive::validate_predicate(c, "public", table, "public." + table, where);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::usage);
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("archive predicates: parse, existing columns, the root table only") {
  const char* dsn = std::getenv("SHARDCTL_TEST_DSN");
  REQUIRE_MESSAGE(dsn != nullptr, "SHARDCTL_TEST_DSN is not set: run through ctest");
  pg::Connection conn(dsn, "shard test");
  conn.transact([](pqxx::work& tx) {
    tx.exec("CREATE TABLE orders (id bigint PRIMARY KEY, created_at timestamptz, status text)");
    tx.exec("CREATE TABLE other (id bigint)");
    tx.exec("CREATE TABLE events (id bigint, at date) PARTITION BY RANGE (at)");
    tx.exec("CREATE TABLE events_2025 PARTITION OF events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')");
    tx.exec("CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')");
  });
  CHECK(refusal(conn, "orders", "created_at < now() - interval '400 days'") == "");
  CHECK(refusal(conn, "orders", "status IN ('done', 'void') AND id % 2 = 0") == "");
  CHECK(refusal(conn, "events", "at < '2026-06-01'") == "");  // partitions are the root's own

  CHECK(refusal(conn, "orders", "created_at <") .find("not a valid condition") != std::string::npos);
  CHECK(refusal(conn, "orders", "nosuch > 1").find("nosuch") != std::string::npos);
  CHECK(refusal(conn, "orders", "id IN (SELECT id FROM other)").find("reads another table (public.other)") !=
        std::string::npos);
  CHECK(refusal(conn, "orders", "EXISTS (SELECT 1 FROM other o WHERE o.id = orders.id)").find("another table") !=
        std::string::npos);
  CHECK(refusal(conn, "orders", "   ").find("empty") != std::string::npos);
  CHECK(refusal(conn, "nosuch", "true").find("does not exist") != std::string::npos);
  // Two statements never reach the server as two: the table survives.
  CHECK(refusal(conn, "orders", "true); DROP TABLE other; --") != "");
  conn.read([](pqxx::work& tx) { CHECK(tx.exec("SELECT to_regclass('other') IS NOT NULL")[0][0].as<bool>()); });
}
