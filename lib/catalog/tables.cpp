// Store: sharded and reference tables, and cross-shard references.
#include <string>

#include "catalog/catalog.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"

namespace shardctl::catalog {
namespace {

TableDef table_from(const pqxx::row& r) {
  TableDef t;
  t.name = r["name"].as<std::string>();
  t.kind = r["kind"].as<std::string>();
  if (!r["map"].is_null()) t.map = r["map"].as<std::string>();
  if (!r["key_column"].is_null()) t.key_column = r["key_column"].as<std::string>();
  return t;
}

constexpr const char* table_select =
    "SELECT t.name, t.kind, mp.name AS map, t.key_column FROM shardctl.tables t "
    "LEFT JOIN shardctl.maps mp USING (map_id) ";

std::vector<std::string> text_array(const pqxx::field& f) {
  std::vector<std::string> out;
  auto parser = f.as_array();
  for (auto item = parser.get_next(); item.first != pqxx::array_parser::done; item = parser.get_next())
    if (item.first == pqxx::array_parser::string_value) out.push_back(item.second);
  return out;
}


void refuse_existing_table(pqxx::work& tx, const std::string& name) {
  auto r = tx.exec_params("SELECT kind FROM shardctl.tables WHERE name = $1", name);
  if (!r.empty())
    throw usage_error("table " + name + " is already declared (" + r[0][0].as<std::string>() + ")",
                      "remove it first with `shardctl table remove " + name + "`");
}

}  // namespace

TableDef Store::add_sharded_table(const std::string& table, const std::string& map_name, const std::string& key_column) {
  std::string name = qualify_table(table);
  Map map = get_map(map_name);
  if (key_column.empty()) throw usage_error("--key must name the key column");
  TableDef out;
  conn_.transact([&](pqxx::work& tx) {
    refuse_existing_table(tx, name);
    out = table_from(tx.exec_params1(
        "WITH ins AS (INSERT INTO shardctl.tables (name, kind, map_id, key_column) "
        "VALUES ($1, 'sharded', $2, $3) RETURNING *) "
        "SELECT ins.name, ins.kind, $4::text AS map, ins.key_column FROM ins",
        name, map.id, key_column, map.name));
  });
  return out;
}

TableDef Store::add_reference_table(const std::string& table) {
  std::string name = qualify_table(table);
  TableDef out;
  conn_.transact([&](pqxx::work& tx) {
    refuse_existing_table(tx, name);
    out = table_from(tx.exec_params1(
        "WITH ins AS (INSERT INTO shardctl.tables (name, kind) VALUES ($1, 'reference') RETURNING *) "
        "SELECT ins.name, ins.kind, NULL::text AS map, ins.key_column FROM ins",
        name));
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
  std::string name = qualify_table(table);
  conn_.transact([&](pqxx::work& tx) {
    if (tx.exec_params("SELECT 1 FROM shardctl.tables WHERE name = $1", name).empty())
      throw usage_error("unknown table '" + name + "'", "`shardctl table list` shows the declared tables");
    auto xrefs = tx.exec_params1(
        "SELECT count(*), string_agg(name, ', ') FROM shardctl.xrefs WHERE child_table = $1 OR parent_table = $1",
        name);
    if (xrefs[0].as<std::int64_t>() > 0 && !force)
      throw usage_error("table " + name + " is used by xref(s) " + xrefs[1].as<std::string>(),
                        "remove them with `shardctl xref remove NAME`, or pass --force");
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
  Map map = get_map(xref.map);
  Xref out = xref;
  out.child_table = qualify_table(xref.child_table);
  out.parent_table = qualify_table(xref.parent_table);
  conn_.transact([&](pqxx::work& tx) {
    if (!tx.exec_params("SELECT 1 FROM shardctl.xrefs WHERE name = $1", xref.name).empty())
      throw usage_error("xref " + xref.name + " already exists");
    for (const auto& t : {out.child_table, out.parent_table})
      if (tx.exec_params("SELECT 1 FROM shardctl.tables WHERE name = $1", t).empty())
        throw usage_error("table " + t + " is not declared",
                          "declare it first: `shardctl table add-sharded " + t + " --map " + map.name +
                              " --key COLUMN`");
    tx.exec_params(
        "INSERT INTO shardctl.xrefs (name, child_table, child_columns, parent_table, parent_columns, "
        "route_column, map_id) VALUES ($1, $2, $3::text[], $4, $5::text[], $6, $7)",
        out.name, out.child_table, text_array_literal(out.child_columns), out.parent_table,
        text_array_literal(out.parent_columns), out.route_column, map.id);
  });
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
      x.child_table = r["child_table"].as<std::string>();
      x.child_columns = text_array(r["child_columns"]);
      x.parent_table = r["parent_table"].as<std::string>();
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
    if (tx.exec_params("DELETE FROM shardctl.xrefs WHERE name = $1 RETURNING 1", name).empty())
      throw usage_error("unknown xref '" + name + "'", "`shardctl xref list` shows the xrefs");
  });
}

}  // namespace shardctl::catalog
