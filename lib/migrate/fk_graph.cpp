// Foreign keys that cross the boundary of what moves, read from pg_constraint (RI triggers are
// internal, so a trigger scan never sees them): children that stay behind while their parents
// move, and parents that stay behind while their children move.
#include <map>
#include <set>

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "migrate/preconditions.hpp"
#include "shardio/fk_tree.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::migrate {

namespace {

// The moving tables and all their partitions, as a query usable in `IN (...)`; $1 is a text[]
// of the moving tables (quoted).
constexpr const char* moving_relids =
    "(SELECT t::regclass::oid FROM unnest($1::text[]) t "
    "UNION SELECT p.relid FROM unnest($1::text[]) t, pg_partition_tree(t::regclass) p)";

std::string moving_array(const Plan& plan) {
  std::vector<std::string> quoted;
  for (const auto& t : plan.tables) quoted.push_back(t.quoted);
  return catalog::text_array_literal(quoted);
}

std::string delete_action(const std::string& code) {
  if (code == "c") return "ON DELETE CASCADE";
  if (code == "r") return "ON DELETE RESTRICT";
  if (code == "n") return "ON DELETE SET NULL";
  if (code == "d") return "ON DELETE SET DEFAULT";
  return "ON DELETE NO ACTION";
}

}  // namespace

void check_foreign_keys_into(shardio::RawConn& shard, const std::string& shard_name, const Plan& plan,
                             std::vector<std::string>& problems) {
  // Top-level constraints only (conparentid = 0): a partitioned FK is one constraint.
  auto rows = shard.query(
      std::string("SELECT format('%I.%I', cn.nspname, cc.relname), c.conname, format('%I.%I', pn.nspname, pc.relname), "
                  "c.confdeltype FROM pg_constraint c "
                  "JOIN pg_class cc ON cc.oid = c.conrelid JOIN pg_namespace cn ON cn.oid = cc.relnamespace "
                  "JOIN pg_class pc ON pc.oid = c.confrelid JOIN pg_namespace pn ON pn.oid = pc.relnamespace "
                  "WHERE c.contype = 'f' AND c.conparentid = 0 AND c.confrelid IN ") +
          moving_relids + " AND c.conrelid NOT IN " + moving_relids + " ORDER BY 1, 2",
      {moving_array(plan)});
  for (const auto& r : rows)
    problems.push_back("table " + r[0] + " references " + r[2] + " (constraint " + r[1] + ", " + delete_action(r[3]) +
                       ") on " + shard_name + " but is not moved with map " + plan.map.name +
                       "; register it with `shardctl table add-sharded` or drop the constraint");
}

void check_foreign_keys_among(shardio::RawConn& shard, const std::string& shard_name, const Plan& plan,
                              std::vector<std::string>& problems) {
  std::vector<std::string> quoted;
  std::map<std::string, const PlannedTable*> by_quoted;
  for (const auto& t : plan.tables) {
    quoted.push_back(t.quoted);
    by_quoted[t.quoted] = &t;
  }
  for (const auto& fk : shardio::foreign_keys_among(shard, quoted)) {
    const PlannedTable* child = by_quoted.at(fk.child);
    const PlannedTable* parent = by_quoted.at(fk.parent);
    bool keyed = false;
    for (std::size_t i = 0; i < fk.child_columns.size(); ++i)
      keyed = keyed || (fk.child_columns[i] == child->key_column && fk.parent_columns[i] == parent->key_column);
    if (keyed) continue;
    problems.push_back("constraint " + fk.name + " of " + child->name + " references " + parent->name +
                       " without the key column " + child->key_column + " on " + shard_name +
                       ": rows of keys that stay may reference rows that move, or the reverse; make " + child->key_column +
                       " part of the foreign key, or declare the relation with `shardctl xref add` and drop the constraint");
  }
}

void check_unmoved_parents(shardio::RawConn& source, const std::string& source_name, shardio::RawConn& target, const Plan& plan,
                           const routing::KeyRange& range, std::vector<std::string>& problems) {
  for (const auto& t : plan.tables) {
    // FKs of this table (or of one of its partitions) whose parent neither moves nor is a
    // registered reference table (those are copied or kept equal on every shard).
    auto fks = source.query(
        std::string("SELECT c.oid::text, c.conname, c.conrelid::regclass::text, format('%I.%I', pn.nspname, pc.relname) "
                    "FROM pg_constraint c JOIN pg_class pc ON pc.oid = c.confrelid "
                    "JOIN pg_namespace pn ON pn.oid = pc.relnamespace WHERE c.contype = 'f' AND c.conparentid = 0 "
                    "AND c.conrelid IN (SELECT $3::regclass::oid UNION SELECT relid FROM pg_partition_tree($3::regclass)) "
                    "AND c.confrelid NOT IN (SELECT to_regclass(t)::oid FROM unnest($2::text[]) t WHERE to_regclass(t) IS NOT NULL) "
                    "AND c.confrelid NOT IN ") +
            moving_relids + " ORDER BY 2",
        {moving_array(plan), catalog::text_array_literal(plan.references), t.quoted});
    for (const auto& fk : fks) {
      const std::string &con_oid = fk[0], &conname = fk[1], &child = fk[2], &parent = fk[3];
      std::string what = "table " + t.name + " references " + parent + " (constraint " + conname + ")";
      if (target.query("SELECT to_regclass($1) IS NOT NULL", {parent})[0][0] != "t") {
        problems.push_back(what + " but " + parent + " is missing on target shard " + plan.target.name);
        continue;
      }
      // Column pairs in constraint order: child column, parent column.
      auto pairs = source.query("SELECT quote_ident(ca.attname), quote_ident(pa.attname) FROM pg_constraint c, "
                                "unnest(c.conkey, c.confkey) WITH ORDINALITY k(cn, pn, i) "
                                "JOIN pg_attribute ca ON ca.attnum = k.cn JOIN pg_attribute pa ON pa.attnum = k.pn "
                                "WHERE c.oid = $1::oid AND ca.attrelid = c.conrelid AND pa.attrelid = c.confrelid ORDER BY k.i",
                                {con_oid});
      std::string child_cols, parent_cols, not_null, match;
      for (const auto& p : pairs) {
        child_cols += (child_cols.empty() ? "" : ", ") + p[0];
        parent_cols += (parent_cols.empty() ? "" : ", ") + p[1];
        // Under MATCH SIMPLE a key with any NULL column references nothing.
        not_null += " AND " + p[0] + " IS NOT NULL";
        match += (match.empty() ? "" : " AND ") + ("x." + p[1]) + " = p." + p[1];
      }
      std::string filter =
          shardio::key_filter(source, plan.space, shardio::KeyColumn{catalog::quote_ident(t.key_column), t.key_own_collation}, range);
      std::string missing;
      // The distinct parent keys of the moving rows go to the target through COPY into a
      // temporary table there, which the parent is probed against.
      shardio::in_rolled_back_transaction(target, [&] {
        target.exec("CREATE TEMP TABLE shardctl_parent_probe ON COMMIT DROP AS SELECT " + parent_cols + " FROM " + parent +
                    " WITH NO DATA");
        shardio::pump_copy(source, "COPY (SELECT DISTINCT " + child_cols + " FROM " + child + " WHERE (" + filter + ")" + not_null +
                              ") TO STDOUT",
                  target, "COPY shardctl_parent_probe (" + parent_cols + ") FROM STDIN");
        missing = target.query("SELECT count(*) FROM shardctl_parent_probe p WHERE NOT EXISTS (SELECT 1 FROM " + parent +
                               " x WHERE " + match + ")")[0][0];
      });
      if (missing != "0")
        problems.push_back(what + ": " + missing + " parent row(s) that the moving rows on " + source_name +
                           " need are missing on " + plan.target.name + "; copy them there first or register " + parent +
                           " with `shardctl table add-reference`");
    }
  }
}

}  // namespace shardctl::migrate
