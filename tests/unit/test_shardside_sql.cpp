// lib/shardside: the SQL embedded from lib/shardside/sql at build time is each file's text, and
// it creates what the name constants say; the guard's version and key kinds are what the
// guard functions expect.
#include <doctest/doctest.h>

#include <cctype>
#include <string>

#include "shardside/guard.hpp"
#include "shardside/names.hpp"
#include "shardside/sql.hpp"

namespace ss = shardctl::shardside;
using shardctl::routing::KeyType;
using shardctl::routing::MapKind;

namespace {

bool shardside_sql_has(std::string_view sql, const std::string& what) { return sql.find(what) != std::string_view::npos; }

}  // namespace

TEST_CASE("every embedded SQL file is there, whole") {
  for (auto sql : {ss::sql::guard, ss::sql::archive_receipts, ss::sql::schema_history, ss::sql::schema_history_2, ss::sql::quarantine}) {
    CHECK(sql.size() > 100);
    CHECK(sql.back() == '\n');  // the file's last line, not cut short
    CHECK_FALSE(shardside_sql_has(sql, "shardside_sql"));  // no trace of the embedding
  }
  // The guard's file ends with the grants of schema shardctl: its last statement.
  constexpr std::string_view last = "GRANT USAGE ON SCHEMA shardctl TO PUBLIC;\n";
  CHECK(ss::sql::guard.substr(ss::sql::guard.size() - last.size()) == last);
}

TEST_CASE("the embedded SQL creates the objects the names say") {
  using std::string;
  CHECK(shardside_sql_has(ss::sql::guard, string("CREATE SCHEMA IF NOT EXISTS ") + ss::schema + ";"));
  CHECK(shardside_sql_has(ss::sql::guard, string("CREATE TABLE IF NOT EXISTS ") + ss::guard_ranges_table + " ("));
  CHECK(shardside_sql_has(ss::sql::guard, string("CREATE OR REPLACE FUNCTION ") + ss::guard_row_function + "() RETURNS trigger"));
  CHECK(shardside_sql_has(ss::sql::guard, string("CREATE OR REPLACE FUNCTION ") + ss::guard_rows_function + "() RETURNS trigger"));
  CHECK(shardside_sql_has(ss::sql::guard, string("CREATE OR REPLACE FUNCTION ") + ss::guard_truncate_function + "() RETURNS trigger"));
  CHECK(shardside_sql_has(ss::sql::guard, string("CREATE OR REPLACE FUNCTION ") + ss::guard_route_function + "() RETURNS trigger"));
  CHECK(shardside_sql_has(ss::sql::guard, "CREATE OR REPLACE FUNCTION shardctl.guard_hit(map bigint, v text, how text)"));
  CHECK(string(ss::guard_hit_signature) == "shardctl.guard_hit(bigint, text, text)");
  // The statement guard reads the transition tables the triggers name.
  CHECK(shardside_sql_has(ss::sql::guard, string("FROM ") + ss::guard_old_rows));
  CHECK(shardside_sql_has(ss::sql::guard, string("FROM ") + ss::guard_new_rows));
  CHECK(shardside_sql_has(ss::sql::archive_receipts, string("CREATE TABLE IF NOT EXISTS ") + ss::archive_receipts_table + " ("));
  CHECK(shardside_sql_has(ss::sql::schema_history, string("CREATE TABLE IF NOT EXISTS ") + ss::schema_history_table + " ("));
  CHECK(shardside_sql_has(ss::sql::schema_history_2, string("ALTER TABLE ") + ss::schema_history_table + " "));
  CHECK(shardside_sql_has(ss::sql::quarantine, string("CREATE SCHEMA IF NOT EXISTS ") + ss::quarantine_schema + ";"));
  CHECK(shardside_sql_has(ss::sql::quarantine, string("CREATE TABLE IF NOT EXISTS ") + ss::quarantine_schema + ".manifest ("));
  CHECK(string(ss::bulk_guard_session) == string("SET ") + ss::row_guard_setting + " = off");
}

TEST_CASE("the guard's version is a hash of its SQL") {
  const auto& v = ss::guard_version();
  REQUIRE(v.size() == std::string("shardctl guard ").size() + 16);
  CHECK(v.rfind("shardctl guard ", 0) == 0);
  for (char c : v.substr(15)) CHECK(std::isxdigit(static_cast<unsigned char>(c)));
  CHECK(&ss::guard_version() == &v);  // computed once
}

TEST_CASE("the guard's key kinds are those guard_hit and guard_rows know") {
  CHECK(ss::guard_key_kind({MapKind::range, KeyType::int4}) == "int");
  CHECK(ss::guard_key_kind({MapKind::list, KeyType::int8}) == "int");
  CHECK(ss::guard_key_kind({MapKind::range, KeyType::text}) == "text");
  CHECK(ss::guard_key_kind({MapKind::range, KeyType::uuid}) == "uuid");
  for (auto t : {KeyType::int4, KeyType::int8, KeyType::text, KeyType::uuid}) {
    auto how = ss::guard_key_kind({MapKind::hash, t});
    CHECK(how.rfind("hash_", 0) == 0);
    CHECK(shardside_sql_has(ss::sql::guard, "WHEN '" + how + "' THEN"));
  }
  for (const char* how : {"int", "text", "uuid"}) CHECK(shardside_sql_has(ss::sql::guard, std::string("WHEN '") + how + "' THEN"));
}

TEST_CASE("guard triggers and own schemas are recognised by name only") {
  for (const char* name : ss::guard_triggers) CHECK(ss::is_guard_trigger(name));
  CHECK(ss::is_guard_trigger("shardctl_guard_delete"));
  CHECK(ss::is_guard_trigger("shardctl_guard_route"));
  CHECK_FALSE(ss::is_guard_trigger("shardctl_guardian"));
  CHECK_FALSE(ss::is_guard_trigger("audit_delete"));
  CHECK(ss::is_own_schema("shardctl"));
  CHECK(ss::is_own_schema("shardctl_quarantine"));
  CHECK_FALSE(ss::is_own_schema("public"));
  CHECK_FALSE(ss::is_own_schema("shardctl_archive"));
}
