#include "shardio/shard_schema.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "core/dependency_order.hpp"
#include "core/error.hpp"
#include "pg/sqlstate.hpp"

namespace shardctl::shardio {

std::vector<Column> table_columns(RawConn& conn, const std::string& quoted_table) {
  auto exists = conn.query("SELECT to_regclass($1) IS NOT NULL", {quoted_table});
  if (exists[0][0] != "t") return {};
  std::vector<Column> out;
  for (auto& row : conn.query("SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute "
                              "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped "
                              "AND attgenerated = '' ORDER BY attnum",
                              {quoted_table}))
    out.push_back({row[0], row[1], row[2] == "t"});
  return out;
}

KeyIndex key_index(RawConn& conn, const std::string& quoted_table, const std::string& key_column) {
  auto r = conn.query(
      "SELECT coalesce(bool_or(a.attnum = i.indkey[0]), false), count(*) > 0 "
      "FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attname = $2 "
      "WHERE i.indrelid = $1::regclass AND (i.indisprimary OR i.indisunique) AND a.attnum = ANY(i.indkey)",
      {quoted_table, key_column});
  if (r[0][0] == "t") return KeyIndex::leading;
  return r[0][1] == "t" ? KeyIndex::non_leading : KeyIndex::none;
}

std::vector<std::string> primary_key(RawConn& conn, const std::string& quoted_table) {
  std::vector<std::string> out;
  for (auto& row : conn.query("SELECT a.attname FROM pg_index i JOIN pg_attribute a "
                              "ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                              "WHERE i.indrelid = $1::regclass AND i.indisprimary "
                              "ORDER BY array_position(i.indkey::int2[], a.attnum)",
                              {quoted_table}))
    out.push_back(row[0]);
  return out;
}

std::vector<std::string> fk_order(RawConn& conn, const std::vector<std::string>& quoted_tables) {
  std::map<std::string, std::string> oid_of;  // oid -> table
  for (const auto& t : quoted_tables) oid_of[conn.query("SELECT $1::regclass::oid", {t})[0][0]] = t;
  std::vector<std::pair<std::string, std::string>> references;  // (table, table it references)
  for (auto& row : conn.query("SELECT conrelid::oid, confrelid::oid FROM pg_constraint WHERE contype = 'f'"))
    if (oid_of.count(row[0]) && oid_of.count(row[1])) references.emplace_back(oid_of[row[0]], oid_of[row[1]]);
  return parents_first(quoted_tables, references, "sharded tables");
}

bool own_collation_fits(RawConn& conn, const std::string& quoted_table, const std::string& key_column,
                        routing::MapKind kind) {
  // Oid 100 is the default collation: an ICU database default (datlocprovider 'i') is not
  // bytewise, and a database default is always deterministic. Oid 0: not a collatable type.
  std::string fits = kind == routing::MapKind::hash
                         ? "CASE WHEN a.attcollation = 0 THEN false WHEN a.attcollation = 100 THEN true "
                           "ELSE c.collisdeterministic END"
                         : "CASE WHEN a.attcollation = 100 THEN (SELECT d.datlocprovider = 'c' AND d.datcollate IN ('C', 'POSIX') "
                           "FROM pg_database d WHERE d.datname = current_database()) "
                           "ELSE c.collprovider = 'c' AND c.collcollate IN ('C', 'POSIX') END";
  auto r = conn.query("SELECT coalesce(" + fits + ", false) "
                      "FROM pg_attribute a LEFT JOIN pg_collation c ON c.oid = a.attcollation "
                      "WHERE a.attrelid = $1::regclass AND a.attname = $2 AND NOT a.attisdropped",
                      {quoted_table, key_column});
  return !r.empty() && r[0][0] == "t";
}

std::vector<std::string> delete_triggers(RawConn& conn, const std::string& quoted_table) {
  std::vector<std::string> out;
  for (auto& row : conn.query("SELECT tgname FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal "
                              "AND (tgtype & 8) <> 0",
                              {quoted_table}))
    out.push_back(row[0]);
  return out;
}

}  // namespace shardctl::shardio

namespace shardctl::shardio {

bool binary_copy_is_portable(RawConn& conn, const std::string& quoted_table) {
  return conn.query(
             "SELECT NOT EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
             "JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END "
             "LEFT JOIN pg_type e ON e.oid = b.typelem "
             "WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND "
             "(b.typtype = 'c' OR (b.typcategory = 'A' AND (b.typelem >= 16384 OR e.typtype = 'c'))))",
             {quoted_table})[0][0] == "t";
}

bool may_skip_triggers(RawConn& conn) {
  conn.exec("BEGIN");
  Result r(PQexec(conn.get(), "SET LOCAL session_replication_role = replica"));
  const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
  bool ok = PQresultStatus(r.get()) == PGRES_COMMAND_OK;
  bool denied = !ok && state && state == pg::sqlstate::insufficient_privilege;
  if (!ok && !denied) conn.fail(r.get(), "SET session_replication_role");
  conn.exec("ROLLBACK");
  return ok;
}

std::vector<std::string> origin_triggers(RawConn& conn, const std::string& quoted_table) {
  std::vector<std::string> out;
  for (const auto& r : conn.query(
           "SELECT DISTINCT tgname || ' (' || concat_ws(' ', CASE WHEN tgtype & 4 <> 0 THEN 'INSERT' END, "
           "CASE WHEN tgtype & 8 <> 0 THEN 'DELETE' END, CASE WHEN tgtype & 16 <> 0 THEN 'UPDATE' END, "
           "CASE WHEN tgtype & 32 <> 0 THEN 'TRUNCATE' END) || ')' FROM pg_trigger "
           "WHERE NOT tgisinternal AND tgenabled = 'O' AND tgrelid IN (SELECT relid FROM pg_partition_tree($1::regclass)) "
           "ORDER BY 1",
           {quoted_table}))
    out.push_back(r[0]);
  return out;
}

}  // namespace shardctl::shardio
