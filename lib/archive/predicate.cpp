#include "archive/predicate.hpp"

#include <nlohmann/json.hpp>

#include <set>
#include <utility>

#include "catalog/names.hpp"
#include "core/error.hpp"

namespace shardctl::archive {
using catalog::quote_ident;
namespace {

using Relation = std::pair<std::string, std::string>;  // schema, name

// Every relation a plan reads, at any depth (subplans and init plans included).
void collect_relations(const nlohmann::json& node, std::set<Relation>& out) {
  if (node.is_object()) {
    if (node.contains("Relation Name") && node["Relation Name"].is_string())
      out.insert({node.value("Schema", ""), node["Relation Name"].get<std::string>()});
    for (const auto& [key, value] : node.items()) collect_relations(value, out);
  } else if (node.is_array()) {
    for (const auto& item : node) collect_relations(item, out);
  }
}

}  // namespace

void validate_predicate(pg::Connection& shard, const std::string& schema, const std::string& table,
                        const std::string& shown, const std::string& predicate) {
  if (predicate.find_first_not_of(" \t\r\n") == std::string::npos)
    throw usage_error("the archive predicate (--where) is empty", "write a condition, e.g. \"created_at < now() - interval '400 days'\"");
  std::string plan_text;
  std::set<Relation> allowed;
  std::string sql_error;
  shard.read([&](pqxx::work& tx) {
    tx.exec("SET TRANSACTION READ ONLY");
    auto exists = tx.exec_params("SELECT to_regclass($1) IS NOT NULL", quote_ident(schema) + "." + quote_ident(table));
    if (!exists[0][0].as<bool>()) throw usage_error("table " + shown + " does not exist on " + shard.where());
    // The root and, when it is partitioned, its partitions: the plan reads those.
    for (const auto& r : tx.exec_params(
             "SELECT n.nspname, c.relname FROM pg_partition_tree($1::regclass) t JOIN pg_class c ON c.oid = t.relid "
             "JOIN pg_namespace n ON n.oid = c.relnamespace",
             quote_ident(schema) + "." + quote_ident(table)))
      allowed.insert({r[0].as<std::string>(), r[1].as<std::string>()});
    allowed.insert({schema, table});
    try {
      pqxx::subtransaction sub(tx, "explain_predicate");
      auto r = sub.exec_params("EXPLAIN (FORMAT JSON, VERBOSE) SELECT 1 FROM " + quote_ident(schema) + "." +
                               quote_ident(table) + " WHERE (" + predicate + ")");
      plan_text = r[0][0].as<std::string>();
    } catch (const pqxx::sql_error& e) {
      sql_error = e.what();
    }
  });
  if (!sql_error.empty()) {
    auto line = sql_error.substr(0, sql_error.find('\n'));
    if (line.rfind("ERROR:  ", 0) == 0) line = line.substr(8);
    throw usage_error("the archive predicate is not a valid condition on " + shown + ": " + line,
                      "it is SQL for a WHERE clause over the root table's columns");
  }
  std::set<Relation> read;
  collect_relations(nlohmann::json::parse(plan_text), read);
  for (const auto& rel : read)
    if (!allowed.count(rel))
      throw usage_error("the archive predicate reads another table (" + rel.first + "." + rel.second + ")",
                        "an archive predicate may use only the columns of " + shown);
}

}  // namespace shardctl::archive
