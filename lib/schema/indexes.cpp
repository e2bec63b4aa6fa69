#include "schema/indexes.hpp"

#include <algorithm>

#include "catalog/names.hpp"

namespace shardctl::schema {
namespace {

std::string drop_sql(const std::string& index) { return "DROP INDEX CONCURRENTLY IF EXISTS " + index + ";"; }

}  // namespace

std::vector<InvalidIndex> invalid_indexes(shardio::RawConn& conn) {
  auto rows = conn.query(
      "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), quote_ident(tn.nspname) || '.' || quote_ident(t.relname) "
      "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
      "JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace "
      "WHERE NOT i.indisvalid AND c.relkind = 'i' ORDER BY 1");
  std::vector<InvalidIndex> out;
  for (const auto& r : rows) out.push_back({r[0], r[1], drop_sql(r[0]), ""});
  return out;
}

std::vector<InvalidIndex> invalid_file_indexes(shardio::RawConn& conn, const std::vector<Migration>& files) {
  std::vector<std::string> names, tables, owners;
  for (const auto& m : files)
    for (const auto& st : split_statements(m.sql))
      if (auto ix = created_index(st)) {
        names.push_back(ix->name);
        tables.push_back(ix->table);
        owners.push_back(m.file);
      }
  if (names.empty()) return {};
  // Nearly every shard has no INVALID index at all: a look at pg_index alone says so, where the
  // query below makes a fresh backend plan a join over five catalogs (a few milliseconds of
  // server CPU per shard, on every shard of a fleet).
  if (conn.query("SELECT EXISTS (SELECT FROM pg_catalog.pg_index WHERE NOT indisvalid)")[0][0] != "t") return {};
  // to_regclass() of a name that does not parse raises an error; created_index() only gives
  // quoted names of one to three parts, and a cross-database one is cut to its last two.
  auto rows = conn.query(
      "SELECT DISTINCT ON (c.oid) quote_ident(n.nspname) || '.' || quote_ident(c.relname), "
      "quote_ident(tn.nspname) || '.' || quote_ident(t.relname), f.file "
      "FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS f(name, tbl, file, ord) "
      "JOIN pg_class c ON c.relname = f.name AND c.relkind = 'i' "
      "JOIN pg_index i ON i.indexrelid = c.oid AND NOT i.indisvalid "
      "JOIN pg_namespace n ON n.oid = c.relnamespace "
      "JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace tn ON tn.oid = t.relnamespace "
      "WHERE to_regclass(f.tbl) IS NULL OR i.indrelid = to_regclass(f.tbl) "
      "ORDER BY c.oid, f.ord",
      {catalog::text_array_literal(names), catalog::text_array_literal(tables), catalog::text_array_literal(owners)});
  std::vector<InvalidIndex> out;
  for (const auto& r : rows) out.push_back({r[0], r[1], drop_sql(r[0]), r[2]});
  std::sort(out.begin(), out.end(), [](const InvalidIndex& a, const InvalidIndex& b) { return a.index < b.index; });
  return out;
}

}  // namespace shardctl::schema
