#include "migrate/load_path.hpp"

#include <algorithm>
#include <map>

#include "catalog/names.hpp"
#include "shardio/shard_schema.hpp"

namespace shardctl::migrate {

namespace {

std::vector<std::string> quoted_of(const std::vector<PlannedTable>& tables) {
  std::vector<std::string> q;
  for (const auto& t : tables) q.push_back(t.quoted);
  return q;
}

// Foreign keys of the moving tables on `target` that the load's own order does not prove.
std::string unproven_fk(shardio::RawConn& target, const std::vector<PlannedTable>& tables,
                        const std::vector<std::string>& references) {
  std::map<std::string, const PlannedTable*> by_oid;
  for (const auto& t : tables) by_oid[target.query("SELECT $1::regclass::oid::text", {t.quoted})[0][0]] = &t;
  std::vector<std::string> ref_oids;
  for (const auto& r : references) {
    auto o = target.query("SELECT coalesce(to_regclass($1)::oid::text, '')", {r})[0][0];
    if (!o.empty()) ref_oids.push_back(o);
  }
  // Every FK whose child is a moving table or one of its partitions; roots of both sides, and
  // the column pairs in constraint order.
  auto fks = target.query(
      "SELECT c.conname, coalesce(pg_partition_root(c.conrelid), c.conrelid)::oid::text, "
      "coalesce(pg_partition_root(c.confrelid), c.confrelid)::oid::text, c.confrelid::regclass::text, "
      "(SELECT string_agg(ca.attname || '=' || pa.attname, ',') FROM unnest(c.conkey, c.confkey) k(cn, pn) "
      " JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = k.cn "
      " JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = k.pn) "
      "FROM pg_constraint c WHERE c.contype = 'f' AND c.conparentid = 0 AND "
      "coalesce(pg_partition_root(c.conrelid), c.conrelid) IN (SELECT t::regclass::oid FROM unnest($1::text[]) t) ORDER BY 1",
      {catalog::text_array_literal(quoted_of(tables))});
  for (const auto& fk : fks) {
    const PlannedTable* child = by_oid.at(fk[1]);
    if (std::find(ref_oids.begin(), ref_oids.end(), fk[2]) != ref_oids.end()) continue;
    auto parent = by_oid.find(fk[2]);
    if (parent != by_oid.end()) {
      std::string pairs = "," + fk[4] + ",";
      if (pairs.find("," + child->key_column + "=" + parent->second->key_column + ",") != std::string::npos) continue;
      return "constraint " + fk[0] + " of " + child->name + " references " + fk[3] + " without the key column";
    }
    return "constraint " + fk[0] + " of " + child->name + " references " + fk[3] + ", which does not move";
  }
  return "";
}

// Foreign keys on a source from tables outside the moving set into it.
std::string referenced_from_outside(shardio::RawConn& source, const std::vector<PlannedTable>& tables) {
  auto r = source.query(
      "WITH m AS (SELECT p.relid FROM unnest($1::text[]) t, pg_partition_tree(t::regclass) p) "
      "SELECT c.conname || ' of ' || c.conrelid::regclass::text FROM pg_constraint c "
      "WHERE c.contype = 'f' AND c.confrelid IN (SELECT relid FROM m) AND c.conrelid NOT IN (SELECT relid FROM m) "
      "ORDER BY 1 LIMIT 1",
      {catalog::text_array_literal(quoted_of(tables))});
  return r.empty() ? "" : "constraint " + r[0][0] + " references a moving table from outside the moved set";
}

std::string skipped_triggers(shardio::RawConn& conn, const std::vector<PlannedTable>& tables) {
  for (const auto& t : tables) {
    auto trg = shardio::origin_triggers(conn, t.quoted);
    if (!trg.empty()) return "table " + t.name + " has trigger " + trg.front() + " that replica mode would skip";
  }
  return "";
}

}  // namespace

LoadPath choose_load_path(shardio::RawConn& target, const std::vector<shardio::RawConn*>& sources,
                          const std::vector<PlannedTable>& tables, const std::vector<std::string>& references,
                          bool checked_requested) {
  LoadPath p;
  if (checked_requested) {
    p.why = "checked load and purge: requested (SHARDCTL_CHECKED_LOAD)";
    return p;
  }
  std::string load_no, purge_no;
  if (!shardio::may_skip_triggers(target)) load_no = "the role on " + target.role() + " may not set session_replication_role (not superuser)";
  if (load_no.empty()) load_no = unproven_fk(target, tables, references);
  if (load_no.empty()) load_no = skipped_triggers(target, tables);
  for (auto* s : sources) {
    if (!purge_no.empty()) break;
    if (!shardio::may_skip_triggers(*s)) purge_no = "the role on " + s->role() + " may not set session_replication_role (not superuser)";
    if (purge_no.empty()) purge_no = referenced_from_outside(*s, tables);
    if (purge_no.empty()) purge_no = skipped_triggers(*s, tables);
  }
  p.skip_load_checks = load_no.empty();
  p.skip_purge_checks = purge_no.empty();
  std::string load = p.skip_load_checks ? "load skips FK triggers (every foreign key of the moving tables is satisfied by the "
                                          "batch itself, parents first, or by reference tables on the target)"
                                        : "checked load: " + load_no;
  std::string purge = p.skip_purge_checks ? "purge skips FK triggers (no unmoved table references the moving rows; children "
                                            "are deleted first)"
                                          : "checked purge: " + purge_no;
  p.why = (p.skip_load_checks && p.skip_purge_checks ? "fast path: " : p.skip_load_checks || p.skip_purge_checks ? "partly fast path: " : "checked path: ") +
          load + "; " + purge;
  return p;
}

}  // namespace shardctl::migrate
