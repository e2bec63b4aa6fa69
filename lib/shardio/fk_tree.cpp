#include "shardio/fk_tree.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace shardctl::shardio {
namespace {

using catalog::quote_ident;

// A foreign key referencing `parent`: the referencing table and the column pairs.
struct ChildFk {
  std::string schema, table;
  std::vector<std::string> child_cols, parent_cols;  // raw names, in key order
};

using Rows = std::vector<std::vector<std::string>>;

// A query's rows about foreign keys, one per column pair in key order, the constraint's oid in
// column 0 and the pair (child column, parent column) at `pair_at`: one entry per constraint,
// in the order first seen, with its first row for the constraint's other columns.
struct Grouped {
  const std::vector<std::string>* first;
  std::vector<std::string> child_cols, parent_cols;
};
std::vector<Grouped> by_constraint(const Rows& rows, std::size_t pair_at) {
  std::map<std::string, std::size_t> index;
  std::vector<Grouped> out;
  for (const auto& r : rows) {
    auto [it, fresh] = index.emplace(r[0], out.size());
    if (fresh) out.push_back({&r, {}, {}});
    out[it->second].child_cols.push_back(r[pair_at]);
    out[it->second].parent_cols.push_back(r[pair_at + 1]);
  }
  return out;
}

std::vector<ChildFk> child_fks(RawConn& conn, const std::string& quoted_parent) {
  auto rows = conn.query(
      "SELECT c.oid::text, n.nspname, cl.relname, a.attname, fa.attname "
      "FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace "
      "CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(ck, fk, i) "
      "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.ck "
      "JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = k.fk "
      "WHERE c.contype = 'f' AND c.confrelid = $1::regclass AND c.conrelid <> c.confrelid "
      // A partitioned table's foreign key is cloned onto each partition (conparentid set): the
      // parent's constraint already covers their rows.
      "AND c.conparentid = 0 "
      "ORDER BY n.nspname, cl.relname, c.oid, k.i",
      {quoted_parent});
  std::vector<ChildFk> out;
  for (auto& g : by_constraint(rows, 3)) out.push_back({(*g.first)[1], (*g.first)[2], std::move(g.child_cols), std::move(g.parent_cols)});
  return out;
}

void add_children(RawConn& conn, FkNode& node, int depth, std::vector<std::string>& path) {
  // Deep FK chains are rare; a bound keeps a pathological schema from recursing forever.
  if (depth > 16) throw usage_error("foreign keys below " + node.quoted + " nest deeper than 16 tables");
  for (const auto& fk : child_fks(conn, node.quoted)) {
    FkNode child;
    child.schema = fk.schema;
    child.table = fk.table;
    child.quoted = quote_ident(fk.schema) + "." + quote_ident(fk.table);
    if (std::find(path.begin(), path.end(), child.quoted) != path.end()) continue;  // a cycle: already taken
    // Built by appending: GCC 12 warns (-Wrestrict, wrongly) on "t" + std::string&& here.
    child.alias = "t";
    child.alias.append(std::to_string(depth + 1));
    child.child_columns = fk.child_cols;
    child.parent_columns = fk.parent_cols;
    std::vector<std::string> cc, pc;
    for (const auto& c : fk.child_cols) cc.push_back(child.alias + "." + quote_ident(c));
    for (const auto& c : fk.parent_cols) pc.push_back(node.alias + "." + quote_ident(c));
    child.predicate = "(";
    child.predicate.append(join(cc, ", ")).append(") IN (SELECT ").append(join(pc, ", ")).append(" FROM ");
    child.predicate.append(node.quoted).append(" ").append(node.alias).append(" WHERE ").append(node.predicate).append(")");
    path.push_back(child.quoted);
    add_children(conn, child, depth + 1, path);
    path.pop_back();
    node.children.push_back(std::move(child));
  }
}

}  // namespace

std::vector<ForeignKey> foreign_keys_among(RawConn& conn, const std::vector<std::string>& quoted_tables) {
  auto rows = conn.query(
      "WITH s AS (SELECT n, to_regclass(n) AS oid FROM unnest($1::text[]) AS n) "
      "SELECT c.oid::text, c.conname, sc.n, sp.n, a.attname, fa.attname "
      "FROM pg_constraint c JOIN s sc ON sc.oid = coalesce(pg_partition_root(c.conrelid), c.conrelid) "
      "JOIN s sp ON sp.oid = coalesce(pg_partition_root(c.confrelid), c.confrelid) "
      "CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(ck, fk, i) "
      "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.ck "
      "JOIN pg_attribute fa ON fa.attrelid = c.confrelid AND fa.attnum = k.fk "
      "WHERE c.contype = 'f' AND c.conparentid = 0 ORDER BY c.conname, c.oid, k.i",
      {catalog::text_array_literal(quoted_tables)});
  std::vector<ForeignKey> out;
  for (auto& g : by_constraint(rows, 4))
    out.push_back({(*g.first)[1], (*g.first)[2], (*g.first)[3], std::move(g.child_cols), std::move(g.parent_cols)});
  return out;
}

std::vector<ForeignKey> unfollowed_foreign_keys(RawConn& conn, const FkNode& root) {
  std::vector<std::string> tables;
  std::map<std::string, std::string> display;  // quoted -> schema.table as an operator writes it
  std::vector<ForeignKey> edges;  // child, parent and columns of each edge the tree follows
  std::function<void(const FkNode&)> walk = [&](const FkNode& node) {
    if (std::find(tables.begin(), tables.end(), node.quoted) == tables.end()) tables.push_back(node.quoted);
    display[node.quoted] = catalog::display_name({node.schema, node.table});
    for (const auto& child : node.children) {
      edges.push_back({"", child.quoted, node.quoted, child.child_columns, child.parent_columns});
      walk(child);
    }
  };
  walk(root);
  std::vector<ForeignKey> out;
  for (auto& fk : foreign_keys_among(conn, tables)) {
    bool followed = std::any_of(edges.begin(), edges.end(), [&](const ForeignKey& e) {
      return e.child == fk.child && e.parent == fk.parent && e.child_columns == fk.child_columns &&
             e.parent_columns == fk.parent_columns;
    });
    if (followed) continue;
    fk.child = display[fk.child];
    fk.parent = display[fk.parent];
    out.push_back(std::move(fk));
  }
  return out;
}

std::string describe_unfollowed(const ForeignKey& fk) {
  std::string out = "foreign key " + quote_ident(fk.name) + " of " + fk.child;
  if (fk.child == fk.parent) return out + " references its own table";
  return out + " references " + fk.parent + ", which the cascade reaches through it";
}

void add_referencing_tables(RawConn& conn, FkNode& root) {
  std::vector<std::string> path{root.quoted};
  add_children(conn, root, 0, path);
}

}  // namespace shardctl::shardio
