#include "archive/archive_set.hpp"

#include <algorithm>
#include <functional>

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "shardio/fk_tree.hpp"

namespace shardctl::archive {
using catalog::quote_ident;
namespace {

std::string join_qualified(const std::string& qualifier, const std::vector<std::string>& cols, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (i) out += sep;
    out += qualifier;
    out += quote_ident(cols[i]);
  }
  return out;
}

ArchivedTable from_node(shardio::RawConn& shard, const shardio::FkNode& node, int parent) {
  ArchivedTable t;
  t.schema = node.schema;
  t.table = node.table;
  t.name = catalog::display_name({node.schema, node.table});
  t.quoted = node.quoted;
  t.alias = node.alias;
  t.parent = parent;
  t.child_columns = node.child_columns;
  t.parent_columns = node.parent_columns;
  t.columns = shardio::table_columns(shard, node.quoted);
  t.primary_key = shardio::primary_key(shard, node.quoted);
  t.plain = shard.query("SELECT relkind FROM pg_class WHERE oid = $1::regclass", {node.quoted})[0][0] == "r";
  if (!node.child_columns.empty())
    t.fk_indexed = shard.query(
        "SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = $1::regclass AND i.indpred IS NULL AND "
        "(SELECT array_agg(a.attname::text ORDER BY a.attname) FROM unnest((i.indkey::int2[])[0:$2 - 1]) k "
        "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k) = "
        "(SELECT array_agg(c ORDER BY c) FROM unnest($3::text[]) c))",
        {node.quoted, std::to_string(node.child_columns.size()), catalog::text_array_literal(node.child_columns)})[0][0] == "t";
  return t;
}

}  // namespace

std::string fk_join(const std::vector<std::string>& child_columns, const std::vector<std::string>& parent_columns,
                    const std::string& child_alias, const std::string& parent_alias) {
  std::string out;
  for (std::size_t i = 0; i < child_columns.size() && i < parent_columns.size(); ++i) {
    if (i) out += " AND ";
    out += child_alias + "." + quote_ident(child_columns[i]) + " = " + parent_alias + "." + quote_ident(parent_columns[i]);
  }
  return out;
}

std::string ArchivedTable::column_list(const std::string& qualifier) const {
  std::vector<std::string> names;
  for (const auto& c : columns) names.push_back(c.name);
  return join_qualified(qualifier, names, ", ");
}

// A root row (alias t0) is referenced by a row of `r` (alias `alias`) other than itself: a row
// that references only itself goes like any other.
std::string ArchiveSet::referenced_by(const ArchivedTable& r, const std::string& alias) const {
  std::string out = fk_join(r.child_columns, r.parent_columns, alias, "t0");
  if (r.quoted == tables.front().quoted) out += " AND (" + alias + ".tableoid, " + alias + ".ctid) <> (t0.tableoid, t0.ctid)";
  return out;
}

std::string ArchiveSet::root_filter(const std::string* low_row, const std::string& high_row) const {
  std::string filter = keyset.range_filter(low_row, high_row);
  if (cascade) return filter;
  for (std::size_t i = 0; i < referencing.size(); ++i) {
    const auto& r = referencing[i];
    std::string alias = "shardctl_ref" + std::to_string(i);
    filter += " AND NOT EXISTS (SELECT 1 FROM " + r.quoted + " " + alias + " WHERE " + referenced_by(r, alias) + ")";
  }
  return filter;
}

std::string ArchiveSet::refused_filter(const std::string* low_row, const std::string& high_row) const {
  std::string any;
  for (std::size_t i = 0; i < referencing.size(); ++i) {
    const auto& r = referencing[i];
    std::string alias = "shardctl_ref" + std::to_string(i);
    if (!any.empty()) any += " OR ";
    any += "EXISTS (SELECT 1 FROM " + r.quoted + " " + alias + " WHERE " + referenced_by(r, alias) + ")";
  }
  if (any.empty()) any = "false";
  return keyset.range_filter(low_row, high_row) + " AND (" + any + ")";
}

std::vector<std::string> ArchiveSet::predicates(const std::string& root) const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    if (t.parent < 0) {
      out.push_back(root);
      continue;
    }
    const auto& p = tables[static_cast<std::size_t>(t.parent)];
    // Each child's rows are those referencing its parent's rows of the batch: the condition
    // nests down to the root's, so every statement needs only the batch bounds.
    std::string pred = "(" + join_qualified(t.alias + ".", t.child_columns, ", ") + ") IN (SELECT " +
                       join_qualified(p.alias + ".", t.parent_columns, ", ") + " FROM " + p.quoted + " " + p.alias +
                       " WHERE " + out[static_cast<std::size_t>(t.parent)] + ")";
    out.push_back(std::move(pred));
  }
  return out;
}

bool ArchiveSet::staged(std::size_t i) const {
  if (i == 0) return true;
  for (const auto& c : tables)
    if (c.parent == static_cast<int>(i)) return true;
  return false;
}

std::string ArchiveSet::batch_relation(std::size_t i) const { return "shardctl_batch_" + std::to_string(i); }

std::string ArchiveSet::stage_sql(std::size_t i, const std::string& root) const {
  const auto& t = tables.at(i);
  std::vector<std::string> referenced;
  for (const auto& c : tables)
    if (c.parent == static_cast<int>(i))
      for (const auto& col : c.parent_columns)
        if (std::find(referenced.begin(), referenced.end(), col) == referenced.end()) referenced.push_back(col);
  std::string sql = "CREATE TEMPORARY TABLE " + batch_relation(i) + " ON COMMIT DROP AS SELECT " + t.alias +
                    ".ctid AS shardctl_ctid";
  if (!referenced.empty()) sql += ", " + join_qualified(t.alias + ".", referenced, ", ");
  return sql + " FROM " + t.quoted + " " + t.alias + " WHERE " + staged_predicate(i, root) + " FOR UPDATE OF " + t.alias;
}

std::string ArchiveSet::staged_predicate(std::size_t i, const std::string& root) const {
  const auto& t = tables.at(i);
  if (t.parent < 0) return root;
  return "(" + join_qualified(t.alias + ".", t.child_columns, ", ") + ") IN (SELECT " +
         join_qualified("", t.parent_columns, ", ") + " FROM " + batch_relation(static_cast<std::size_t>(t.parent)) + ")";
}

std::string ArchiveSet::rows_of(std::size_t i, const std::string& root) const {
  const auto& t = tables.at(i);
  if (!t.plain || !staged(i)) return staged_predicate(i, root);
  return t.alias + ".ctid = ANY (ARRAY(SELECT shardctl_ctid FROM " + batch_relation(i) + "))";
}

std::string ArchiveSet::select_sql(std::size_t i, const std::string& predicate, const std::string& extra) const {
  const auto& t = tables.at(i);
  std::string sql = "SELECT " + t.column_list(t.alias + ".");
  if (!extra.empty()) sql += ", " + extra;
  sql += " FROM " + t.quoted + " " + t.alias + " WHERE " + predicate;
  return sql;
}

std::string ArchiveSet::delete_sql(std::size_t i, const std::string& predicate, const std::string& extra) const {
  const auto& t = tables.at(i);
  std::string sql = "DELETE FROM " + t.quoted + " AS " + t.alias + " WHERE " + predicate + " RETURNING " +
                    t.column_list(t.alias + ".");
  if (!extra.empty()) sql += ", " + extra;
  return sql;
}

nlohmann::json ArchiveSet::describe() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& t : tables)
    arr.push_back({{"table", t.name},
                   {"parent", t.parent < 0 ? nlohmann::json(nullptr) : nlohmann::json(tables[static_cast<std::size_t>(t.parent)].name)},
                   {"columns", t.child_columns},
                   {"parent_columns", t.parent_columns}});
  return arr;
}

ArchiveSet discover_archive_set(shardio::RawConn& shard, const Job& job) {
  auto name = catalog::split_stored(job.table);
  shardio::FkNode root;
  root.schema = name.schema;
  root.table = name.table;
  root.quoted = quote_ident(name.schema) + "." + quote_ident(name.table);
  root.alias = "t0";
  root.predicate = "true";  // discovery only; predicates() writes the real ones per batch
  if (shard.query("SELECT to_regclass($1) IS NOT NULL", {root.quoted})[0][0] != "t")
    throw usage_error("table " + job.table + " does not exist on " + shard.role());
  ArchiveSet set;
  set.cascade = job.cascade;
  set.tables.push_back(from_node(shard, root, -1));
  auto& r = set.tables.front();
  if (r.primary_key.empty())
    throw usage_error("table " + job.table + " has no primary key on " + shard.role(),
                      "an archive run walks the root table by its primary key; add one");
  set.keyset.table = r.quoted;
  set.keyset.predicate = job.where;
  for (const auto& k : r.primary_key)
    for (const auto& c : r.columns)
      if (c.name == k) set.keyset.key.push_back({k, c.type});
  if (set.keyset.key.size() != r.primary_key.size())
    throw usage_error("the primary key of " + job.table + " includes a generated column",
                      "an archive run walks the root table by stored key columns");
  shardio::add_referencing_tables(shard, root);
  if (job.cascade) {
    std::function<void(const shardio::FkNode&, int)> walk = [&](const shardio::FkNode& node, int parent) {
      for (const auto& child : node.children) {
        set.tables.push_back(from_node(shard, child, parent));
        walk(child, static_cast<int>(set.tables.size() - 1));
      }
    };
    walk(root, 0);
    // A table reached along two foreign-key paths would be copied and deleted twice.
    for (std::size_t i = 0; i < set.tables.size(); ++i)
      for (std::size_t k = i + 1; k < set.tables.size(); ++k)
        if (set.tables[i].quoted == set.tables[k].quoted)
          throw usage_error("table " + set.tables[k].name + " references the archived rows along two foreign keys",
                            "--cascade follows each table once; archive its rows in a job of their own first");
    // A foreign key the tree does not follow names rows of the set from rows the batch may
    // leave behind: deleting the referenced rows would cascade to, or fail on, them.
    for (const auto& fk : shardio::unfollowed_foreign_keys(shard, root))
      throw usage_error("--cascade cannot follow " + shardio::describe_unfollowed(fk),
                        "archive without --cascade (a row that is still referenced stays), or archive the "
                        "referencing rows in a job of their own first");
  } else {
    for (const auto& child : root.children) set.referencing.push_back(from_node(shard, child, 0));
    // A root row another root row references stays too (a tree of rows: parent_id). The
    // database would otherwise cascade the delete to a row that is not cold, or refuse it.
    for (const auto& fk : shardio::foreign_keys_among(shard, {r.quoted})) {
      ArchivedTable self = set.tables.front();
      self.parent = 0;
      self.child_columns = fk.child_columns;
      self.parent_columns = fk.parent_columns;
      set.referencing.push_back(std::move(self));
    }
  }
  return set;
}

}  // namespace shardctl::archive
