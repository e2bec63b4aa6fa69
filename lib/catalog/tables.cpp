// Store: sharded and reference tables, and cross-shard references.
#include <optional>
#include <string>
#include <utility>

#include "catalog/catalog.hpp"
#include "catalog/names.hpp"
#include "core/utf8.hpp"
#include "core/error.hpp"
#include "pg/dsn.hpp"

namespace shardctl::catalog {
namespace {

// Names leave the store in display form, so catalogs written before the identifier syntax (which
// kept the operator's spelling) read the same as new ones.
TableDef table_from(const pqxx::row& r) {
  TableDef t;
  t.name = display_stored(r["name"].as<std::string>());
  t.kind = read_word<TableKind>(r["kind"].as<std::string>());
  if (!r["map"].is_null()) t.map = r["map"].as<std::string>();
  if (!r["key_column"].is_null()) t.key_column = r["key_column"].as<std::string>();
  if (!r["source"].is_null()) t.source = r["source"].as<std::string>();
  if (!r["source_dsn"].is_null()) t.source_dsn = r["source_dsn"].as<std::string>();
  return t;
}

constexpr const char* table_select =
    "SELECT t.name, t.kind, mp.name AS map, t.key_column, src.name AS source, t.source_dsn FROM shardctl.tables t "
    "LEFT JOIN shardctl.maps mp USING (map_id) LEFT JOIN shardctl.shards src ON src.shard_id = t.source_shard_id ";

std::vector<std::string> text_array(const pqxx::field& f) {
  std::vector<std::string> out;
  auto parser = f.as_array();
  for (auto item = parser.get_next(); item.first != pqxx::array_parser::done; item = parser.get_next())
    if (item.first == pqxx::array_parser::string_value) out.push_back(item.second);
  return out;
}


struct Declared {
  std::string stored;  // the name exactly as the row has it
  std::string kind;
};

// The declaration of a table, compared by raw parts: older catalogs hold the same table under
// other spellings ("public.\"orders\"", "public.Orders" meaning "Orders"), so the stored text
// cannot be matched with =. The table list is small; reading it whole is cheap.
std::optional<Declared> find_table(pqxx::work& tx, const QualifiedName& want) {
  for (const auto& r : tx.exec("SELECT name, kind FROM shardctl.tables"))
    if (split_stored(r[0].as<std::string>()) == want) return Declared{r[0].as<std::string>(), r[1].as<std::string>()};
  return std::nullopt;
}

void refuse_existing_table(pqxx::work& tx, const QualifiedName& name) {
  if (auto d = find_table(tx, name)) {
    std::string shown = display_name(name);
    throw usage_error("table " + shown + " is already declared (" + d->kind + ")",
                      "remove it first with `shardctl table remove '" + shown + "'`");
  }
}

// Columns of an Xref arrive raw (parsed by the caller); they must still be names PostgreSQL can hold.
void require_raw_columns(const std::vector<std::string>& raw) {
  for (const auto& c : raw)
    if (c.empty() || c.size() > 63 || !valid_utf8(c))
      throw usage_error("invalid column name " + display_ident(printable(c)),
                        "a column name is 1 to 63 bytes of UTF-8");
}

}  // namespace

TableDef Store::add_sharded_table(const std::string& table, const std::string& map_name, const std::string& key_text) {
  auto parsed = parse_qualified_name(table);
  std::string name = display_name(parsed);
  if (key_text.empty()) throw usage_error("--key must name the key column");
  std::string key_column = parse_column_name(key_text);
  Map map = get_map(map_name);
  TableDef out{name, TableKind::sharded, map.name, key_column, std::nullopt, std::nullopt};
  conn_.transact([&](pqxx::work& tx) {
    refuse_existing_table(tx, parsed);
    if (previewing()) return;
    out = table_from(tx.exec_params1(
        "WITH ins AS (INSERT INTO shardctl.tables (name, kind, map_id, key_column) "
        "VALUES ($1, 'sharded', $2, $3) RETURNING *) "
        "SELECT ins.name, ins.kind, $4::text AS map, ins.key_column, NULL::text AS source, NULL::text AS source_dsn FROM ins",
        name, map.id, key_column, map.name));
  });
  return out;
}

namespace {

// The source as stored: the shard's id (a usage Error when unknown), the DSN checked and redacted.
struct StoredSource {
  std::optional<std::int64_t> shard_id;
  std::optional<std::string> dsn;
};

StoredSource stored_source(Store& store, const ReferenceSource& source, const std::string& table) {
  if (source.shard && source.dsn)
    throw usage_error("the source of " + table + " is one shard or one database, not both",
                      "give --source SHARD or --source-dsn DSN");
  StoredSource out;
  if (source.shard) out.shard_id = store.get_shard(*source.shard).id;
  if (source.dsn) {
    if (source.dsn->empty()) throw usage_error("--source-dsn is empty", "give a connection string, or --no-source");
    pg::require_passwordless_dsn(*source.dsn, "the source DSN of " + table);
    out.dsn = pg::redact_dsn(*source.dsn);
  }
  return out;
}

}  // namespace

TableDef Store::add_reference_table(const std::string& table, const ReferenceSource& source) {
  auto parsed = parse_qualified_name(table);
  std::string name = display_name(parsed);
  auto stored = stored_source(*this, source, name);
  TableDef out{name, TableKind::reference, std::nullopt, std::nullopt, source.shard, stored.dsn};
  conn_.transact([&](pqxx::work& tx) {
    refuse_existing_table(tx, parsed);
    if (previewing()) return;
    out = table_from(tx.exec_params1(
        "WITH ins AS (INSERT INTO shardctl.tables (name, kind, source_shard_id, source_dsn) "
        "VALUES ($1, 'reference', $2, $3) RETURNING *) "
        "SELECT ins.name, ins.kind, NULL::text AS map, ins.key_column, $4::text AS source, ins.source_dsn FROM ins",
        name, stored.shard_id, stored.dsn, source.shard));
  });
  return out;
}

TableDef Store::set_reference_source(const std::string& table, const ReferenceSource& source) {
  auto parsed = parse_qualified_name(table);
  auto stored = stored_source(*this, source, display_name(parsed));
  TableDef out;
  conn_.transact([&](pqxx::work& tx) {
    auto found = find_table(tx, parsed);
    if (!found)
      throw usage_error("unknown table " + display_name(parsed), "`shardctl table list` shows the declared tables");
    if (found->kind != "reference")
      throw usage_error("table " + display_name(parsed) + " is " + found->kind + ", not a reference table",
                        "only a reference table has a source");
    if (!previewing())
      tx.exec_params("UPDATE shardctl.tables SET source_shard_id = $2, source_dsn = $3 WHERE name = $1", found->stored,
                     stored.shard_id, stored.dsn);
    out = table_from(tx.exec_params1(std::string(table_select) + "WHERE t.name = $1", found->stored));
    out.source = source.shard;
    out.source_dsn = stored.dsn;
  });
  return out;
}

std::vector<TableDef> Store::list_tables() {
  std::vector<TableDef> out;
  conn_.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec(std::string(table_select) + "ORDER BY t.kind DESC, t.name"))
      out.push_back(table_from(r));
  });
  return out;
}

void Store::remove_table(const std::string& table, bool force) {
  auto parsed = parse_qualified_name(table);
  conn_.transact([&](pqxx::work& tx) {
    auto found = find_table(tx, parsed);
    if (!found)
      throw usage_error("unknown table " + display_name(parsed), "`shardctl table list` shows the declared tables");
    const std::string& name = found->stored;
    auto xrefs = tx.exec_params1(
        "SELECT count(*), string_agg(name, ', ') FROM shardctl.xrefs WHERE child_table = $1 OR parent_table = $1",
        name);
    if (xrefs[0].as<std::int64_t>() > 0 && !force)
      throw usage_error("table " + display_name(parsed) + " is used by xref(s) " + xrefs[1].as<std::string>(),
                        "remove them with `shardctl xref remove NAME`, or pass --force");
    if (previewing()) return;
    tx.exec_params("DELETE FROM shardctl.xrefs WHERE child_table = $1 OR parent_table = $1", name);
    tx.exec_params("DELETE FROM shardctl.tables WHERE name = $1", name);
  });
}

Xref Store::add_xref(const Xref& xref) {
  require_name("xref", xref.name);
  if (xref.child_columns.size() != xref.parent_columns.size())
    throw usage_error("the child has " + std::to_string(xref.child_columns.size()) + " column(s) and the parent " +
                      std::to_string(xref.parent_columns.size()) + "; they must pair up");
  if (xref.route_column.empty()) throw usage_error("--route must name the routing column of the child");
  Xref out = xref;
  require_raw_columns(xref.child_columns);
  require_raw_columns(xref.parent_columns);
  require_raw_columns({xref.route_column});
  auto child = parse_qualified_name(xref.child_table);
  auto parent = parse_qualified_name(xref.parent_table);
  Map map = get_map(xref.map);
  std::string child_stored, parent_stored;
  conn_.transact([&](pqxx::work& tx) {
    if (!tx.exec_params("SELECT 1 FROM shardctl.xrefs WHERE name = $1", xref.name).empty())
      throw usage_error("xref " + xref.name + " already exists");
    // The xref names each table exactly as its declaration row does: check matches them by text.
    for (auto [want, stored] : {std::pair{&child, &child_stored}, std::pair{&parent, &parent_stored}}) {
      auto found = find_table(tx, *want);
      if (!found)
        throw usage_error("table " + display_name(*want) + " is not declared",
                          "declare it first: `shardctl table add-sharded '" + display_name(*want) + "' --map " +
                              map.name + " --key COLUMN`");
      *stored = found->stored;
    }
    if (previewing()) return;
    tx.exec_params(
        "INSERT INTO shardctl.xrefs (name, child_table, child_columns, parent_table, parent_columns, "
        "route_column, map_id) VALUES ($1, $2, $3::text[], $4, $5::text[], $6, $7)",
        out.name, child_stored, text_array_literal(out.child_columns), parent_stored,
        text_array_literal(out.parent_columns), out.route_column, map.id);
  });
  out.child_table = display_name(child);
  out.parent_table = display_name(parent);
  out.map = map.name;
  return out;
}

std::vector<Xref> Store::list_xrefs() {
  std::vector<Xref> out;
  conn_.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec(
             "SELECT x.name, x.child_table, x.child_columns, x.parent_table, x.parent_columns, "
             "x.route_column, mp.name AS map FROM shardctl.xrefs x JOIN shardctl.maps mp USING (map_id) "
             "ORDER BY x.name")) {
      Xref x;
      x.name = r["name"].as<std::string>();
      x.child_table = display_stored(r["child_table"].as<std::string>());
      x.child_columns = text_array(r["child_columns"]);
      x.parent_table = display_stored(r["parent_table"].as<std::string>());
      x.parent_columns = text_array(r["parent_columns"]);
      x.route_column = r["route_column"].as<std::string>();
      x.map = r["map"].as<std::string>();
      out.push_back(std::move(x));
    }
  });
  return out;
}

void Store::remove_xref(const std::string& name) {
  conn_.transact([&](pqxx::work& tx) {
    if (tx.exec_params("SELECT 1 FROM shardctl.xrefs WHERE name = $1 FOR UPDATE", name).empty())
      throw usage_error("unknown xref '" + name + "'", "`shardctl xref list` shows the xrefs");
    if (previewing()) return;
    tx.exec_params("DELETE FROM shardctl.xrefs WHERE name = $1", name);
  });
}

}  // namespace shardctl::catalog
