#include "archive/archive_set.hpp"

#include <algorithm>
#include <functional>

#include "archive/predicate.hpp"
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

// A reference's (child column, parent column) pairs in a fixed order: an xref may list the
// columns of a foreign key in another order and still be the same reference.
std::vector<std::pair<std::string, std::string>> column_pairs(const std::vector<std::string>& child,
                                                              const std::vector<std::string>& parent) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < child.size() && i < parent.size(); ++i) out.emplace_back(child[i], parent[i]);
  std::sort(out.begin(), out.end());
  return out;
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
  for (const auto& t : tables) {
    arr.push_back({{"table", t.name},
                   {"parent", t.parent < 0 ? nlohmann::json(nullptr) : nlohmann::json(tables[static_cast<std::size_t>(t.parent)].name)},
                   {"columns", t.child_columns},
                   {"parent_columns", t.parent_columns}});
    if (!t.xref.empty()) arr.back()["xref"] = t.xref;  // runs without xrefs journal what they always did
  }
  return arr;
}

namespace {

// The job's table as the root of the tree of referencing tables (found below it later).
shardio::FkNode root_node(shardio::RawConn& shard, const Job& job) {
  auto name = catalog::split_stored(job.table);
  shardio::FkNode root;
  root.schema = name.schema;
  root.table = name.table;
  root.quoted = quote_ident(name.schema) + "." + quote_ident(name.table);
  root.alias = "t0";
  root.predicate = "true";  // discovery only; predicates() writes the real ones per batch
  if (shard.query("SELECT to_regclass($1) IS NOT NULL", {root.quoted})[0][0] != "t")
    throw usage_error("table " + job.table + " does not exist on " + shard.role());
  return root;
}

// The root table, and the walk of its rows: by its stored primary-key columns, those the job's
// predicate (as the shard's server renders it) selects.
void add_root(shardio::RawConn& shard, const Job& job, const shardio::FkNode& root, ArchiveSet& set) {
  set.tables.push_back(from_node(shard, root, -1));
  const auto& r = set.tables.front();
  if (r.primary_key.empty())
    throw usage_error("table " + job.table + " has no primary key on " + shard.role(),
                      "an archive run walks the root table by its primary key; add one");
  set.keyset.table = r.quoted;
  set.keyset.predicate = checked_predicate(shard, root.schema, root.table, job.table, job.where);
  for (const auto& k : r.primary_key)
    for (const auto& c : r.columns)
      if (c.name == k) set.keyset.key.push_back({k, c.type});
  if (set.keyset.key.size() != r.primary_key.size())
    throw usage_error("the primary key of " + job.table + " includes a generated column",
                      "an archive run walks the root table by stored key columns");
}

// The same-shard xrefs from table `parent` (display name) that the foreign keys of `fk_children`
// do not already cover, as nodes of a tree (their own foreign-key children found below them),
// each with the xref's name.
std::vector<std::pair<std::string, shardio::FkNode>> xref_nodes(shardio::RawConn& shard, const XrefChildren& xrefs,
                                                               const std::string& parent,
                                                               const std::vector<shardio::FkNode>& fk_children) {
  std::vector<std::pair<std::string, shardio::FkNode>> out;
  for (const auto& x : xrefs.same_shard) {
    if (x.parent_table != parent) continue;
    auto child = catalog::split_stored(x.child_table);
    std::string quoted = quote_ident(child.schema) + "." + quote_ident(child.table);
    bool covered = std::any_of(fk_children.begin(), fk_children.end(), [&](const shardio::FkNode& fk) {
      return fk.quoted == quoted &&
             column_pairs(fk.child_columns, fk.parent_columns) == column_pairs(x.child_columns, x.parent_columns);
    });
    if (covered) continue;
    if (shard.query("SELECT to_regclass($1) IS NOT NULL", {quoted})[0][0] != "t") continue;  // no children here
    shardio::FkNode node;
    node.schema = child.schema;
    node.table = child.table;
    node.quoted = quoted;
    node.predicate = "true";
    node.child_columns = x.child_columns;
    node.parent_columns = x.parent_columns;
    out.emplace_back(x.name, std::move(node));
  }
  return out;
}

// --cascade: every table below the root, reached by foreign keys or same-shard xrefs, parents
// before children, each table once (a table reached along two paths would be copied and
// deleted twice).
class CascadeWalk {
 public:
  CascadeWalk(shardio::RawConn& shard, const XrefChildren& xrefs, ArchiveSet& set) : shard_(shard), xrefs_(xrefs), set_(set) {}

  // `node` under table `parent` (-1: the root, in the set already), reached through `xref` ("" for a foreign key).
  void add(const shardio::FkNode& node, int parent, int depth, const std::string& xref) {
    if (parent >= 0) add_table(node, parent, depth, xref);
    int index = static_cast<int>(set_.tables.size()) - 1;
    const std::string name = set_.tables[static_cast<std::size_t>(index)].name;
    for (const auto& child : node.children) add(child, index, depth + 1, "");
    for (auto& [x, child] : xref_nodes(shard_, xrefs_, name, node.children)) {
      if (child.quoted == node.quoted)
        throw usage_error("--cascade cannot follow xref " + x + " of " + name + ": it references its own table",
                          "archive without --cascade (a row that is still referenced stays), or archive the "
                          "referencing rows in a job of their own first");
      shardio::add_referencing_tables(shard_, child);
      add(child, index, depth + 1, x);
    }
  }

 private:
  void add_table(const shardio::FkNode& node, int parent, int depth, const std::string& xref) {
    for (const auto& t : set_.tables)
      if (t.quoted == node.quoted)
        throw usage_error("table " + t.name + " references the archived rows along two foreign keys" +
                              (xref.empty() ? "" : " or xrefs (xref " + xref + ")"),
                          "--cascade follows each table once; archive its rows in a job of their own first");
    auto t = from_node(shard_, node, parent);
    t.alias = "t" + std::to_string(depth);
    t.xref = xref;
    set_.tables.push_back(std::move(t));
  }

  shardio::RawConn& shard_;
  const XrefChildren& xrefs_;
  ArchiveSet& set_;
};

// A foreign key the set does not follow names rows of the set from rows the batch may leave
// behind: deleting the referenced rows would cascade to, or fail on, them.
void refuse_unfollowed_foreign_keys(shardio::RawConn& shard, const ArchiveSet& set) {
  std::vector<std::string> quoted;
  for (const auto& t : set.tables) quoted.push_back(t.quoted);
  for (auto fk : shardio::foreign_keys_among(shard, quoted)) {
    bool followed = std::any_of(set.tables.begin(), set.tables.end(), [&](const ArchivedTable& t) {
      return t.parent >= 0 && t.xref.empty() && t.quoted == fk.child &&
             set.tables[static_cast<std::size_t>(t.parent)].quoted == fk.parent && t.child_columns == fk.child_columns &&
             t.parent_columns == fk.parent_columns;
    });
    if (followed) continue;
    for (const auto& t : set.tables) {
      if (t.quoted == fk.child) fk.child = t.name;
      if (t.quoted == fk.parent) fk.parent = t.name;
    }
    throw usage_error("--cascade cannot follow " + shardio::describe_unfollowed(fk),
                      "archive without --cascade (a row that is still referenced stays), or archive the "
                      "referencing rows in a job of their own first");
  }
}

// Without --cascade: what keeps a root row where it is. Its direct referencers by foreign key,
// the root itself when a root row references another (a tree of rows: parent_id; the database
// would otherwise cascade the delete to a row that is not cold, or refuse it), and the children
// of same-shard xrefs.
void add_referencing(shardio::RawConn& shard, const XrefChildren& xrefs, const shardio::FkNode& root, ArchiveSet& set) {
  const auto& r = set.tables.front();
  for (const auto& child : root.children) set.referencing.push_back(from_node(shard, child, 0));
  for (const auto& fk : shardio::foreign_keys_among(shard, {r.quoted})) {
    ArchivedTable self = r;
    self.parent = 0;
    self.child_columns = fk.child_columns;
    self.parent_columns = fk.parent_columns;
    set.referencing.push_back(std::move(self));
  }
  for (auto& [x, child] : xref_nodes(shard, xrefs, r.name, root.children)) {
    ArchivedTable t = from_node(shard, child, 0);
    t.alias = "t1";
    t.xref = x;
    set.referencing.push_back(std::move(t));
  }
}

// The xrefs whose children may be on other shards: the run leaves those rows, and says so.
void note_xrefs_elsewhere(const XrefChildren& xrefs, ArchiveSet& set) {
  for (const auto& x : xrefs.elsewhere)
    for (const auto& t : set.cascade ? set.tables : std::vector<ArchivedTable>{set.tables.front()})
      if (x.parent_table == t.name)
        set.notes.push_back("rows of " + x.child_table + " that reference archived rows of " + t.name + " through xref " +
                            x.name + " may be on other shards; this run leaves them (`shardctl check --orphans` reports them)");
}

}  // namespace

ArchiveSet discover_archive_set(shardio::RawConn& shard, const Job& job, const XrefChildren& xrefs) {
  ArchiveSet set;
  set.cascade = job.cascade;
  auto root = root_node(shard, job);
  add_root(shard, job, root, set);
  shardio::add_referencing_tables(shard, root);
  if (job.cascade) {
    CascadeWalk(shard, xrefs, set).add(root, -1, 0, "");
    refuse_unfollowed_foreign_keys(shard, set);
  } else {
    add_referencing(shard, xrefs, root, set);
  }
  note_xrefs_elsewhere(xrefs, set);
  return set;
}

}  // namespace shardctl::archive
