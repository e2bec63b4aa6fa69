#include "check/catalog_checks.hpp"

#include "catalog/catalog.hpp"
#include "catalog/key_sql.hpp"
#include "catalog/operation_sql.hpp"
#include "check/key_space.hpp"
#include "core/error.hpp"
#include "journal/journal.hpp"

namespace shardctl::check {
namespace {

Finding catalog_finding(Kind kind, std::string object, std::string detail, std::string shard = {}) {
  Finding f;
  f.kind = kind;
  f.object = std::move(object);
  f.detail = std::move(detail);
  f.shard = std::move(shard);
  f.count = 1;
  return f;
}

std::string shown(const catalog::Mapping& m) {
  return m.is_point ? routing::format_key(*m.range.low) : routing::format_range(m.range);
}

void map_findings(const catalog::LoadedMap& lm, const Fleet& fleet, std::vector<Finding>& out) {
  const auto& name = lm.map.name;
  std::vector<routing::KeyRange> ranges;
  std::vector<const catalog::Mapping*> of_range;
  for (const auto& m : lm.mappings) {
    const catalog::Shard* s = fleet.shard(m.shard);
    if (!s)
      out.push_back(catalog_finding(Kind::mapping_unknown_shard, name + " " + shown(m),
                                    "mapping routes to shard " + m.shard + ", which the catalog does not have", m.shard));
    else if (s->status == catalog::ShardStatus::offline)
      out.push_back(catalog_finding(Kind::mapping_offline_shard, name + " " + shown(m),
                                    "mapping routes to shard " + m.shard + ", which is offline", m.shard));
    else if (s->status == catalog::ShardStatus::readonly)
      out.push_back(catalog_finding(Kind::mapping_readonly_shard, name + " " + shown(m),
                                    "mapping routes to shard " + m.shard + ", which is readonly: writes fail", m.shard));
    if (!m.is_point) ranges.push_back(m.range);
    of_range.push_back(&m);
  }
  // The catalog's exclusion constraints should make overlaps impossible; the check does not
  // trust them, so a dropped constraint or a hand-edited row is still caught.
  std::vector<const catalog::Mapping*> range_mappings, points;
  for (const auto* m : of_range) (m->is_point ? points : range_mappings).push_back(m);
  auto overlap = [&](const catalog::Mapping& a, const catalog::Mapping& b) {
    out.push_back(catalog_finding(Kind::overlapping_mappings, name + " " + shown(a) + " / " + shown(b),
                                  "mappings overlap: their keys route to " + a.shard + " and " + b.shard));
  };
  for (const auto& [i, j] : overlapping_pairs(ranges)) overlap(*range_mappings[i], *range_mappings[j]);
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (std::size_t j = i + 1; j < points.size(); ++j)
      if (routing::compare_keys(*points[i]->range.low, *points[j]->range.low) == 0) overlap(*points[i], *points[j]);
    for (const auto* r : range_mappings)
      if (routing::range_contains(r->range, *points[i]->range.low)) overlap(*points[i], *r);
  }
  if (lm.map.kind == routing::MapKind::list) return;  // a list map's key space is its points
  auto bound = catalog::bound_type(lm.map.kind, lm.map.key_type);
  for (const auto& gap : unmapped_ranges(bound, ranges)) {
    std::string what = lm.map.kind == routing::MapKind::hash ? "hash values " : "keys ";
    out.push_back(catalog_finding(Kind::unmapped_keys, name + " " + routing::format_range(gap),
                                  what + routing::format_range(gap) + " route to no shard"));
  }
}

}  // namespace

std::vector<Finding> catalog_findings(pg::Connection& catalog, const Fleet& fleet) {
  std::vector<Finding> out;
  for (const auto& [name, lm] : fleet.maps) map_findings(lm, fleet, out);
  std::vector<std::string> expired;
  catalog.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec(
             "SELECT mp.name, coalesce(m.int_range::text, m.text_range::text, m.uuid_range::text), s.name "
             "FROM shardctl.mappings m JOIN shardctl.maps mp USING (map_id) JOIN shardctl.shards s USING (shard_id) "
             "WHERE m.status = 'offline' AND NOT EXISTS (SELECT 1 FROM shardctl.operations o "
             "  WHERE o.map_id = m.map_id AND " + catalog::operation_is_live("o") + " AND "
             "  (o.int_range && m.int_range OR o.text_range && m.text_range OR o.uuid_range && m.uuid_range "
             "   OR num_nonnulls(o.int_range, o.text_range, o.uuid_range) = 0)) "
             "ORDER BY 1, 2"))
      out.push_back(catalog_finding(Kind::offline_mapping, r[0].as<std::string>() + " " + r[1].as<std::string>(),
                                    "mapping is offline but no live operation works on it: writes to its keys "
                                    "are refused",
                                    r[2].as<std::string>()));
    for (const auto& r : tx.exec(
             "SELECT g.op_id::text, s.name, g.table_name, coalesce(o.status, 'missing') "
             "FROM shardctl.guards g JOIN shardctl.shards s USING (shard_id) LEFT JOIN shardctl.operations o USING (op_id) "
             "WHERE o.op_id IS NULL OR " + catalog::operation_is_over("o") + " ORDER BY 1, 2, 3")) {
      auto f = catalog_finding(Kind::leftover_guard, "operation " + r[0].as<std::string>(),
                               "guard recorded in the catalog for an operation that is " + r[3].as<std::string>(),
                               r[1].as<std::string>());
      f.table = r[2].as<std::string>();
      out.push_back(std::move(f));
    }
    for (const auto& r : tx.exec("SELECT op_id::text FROM shardctl.operations "
                                 "WHERE status = 'running' AND lease_until < now() ORDER BY created_at"))
      expired.push_back(r[0].as<std::string>());
  });
  // The runner holds a session advisory lock for as long as it lives (see journal/journal.hpp):
  // a free lock means nobody will renew the lease.
  for (const auto& id : expired) {
    bool gone = false;
    catalog.read([&](pqxx::work& tx) { gone = journal::runner_gone(tx, id); });
    if (gone)
      out.push_back(catalog_finding(Kind::expired_lease, "operation " + id,
                                    "running operation whose lease expired and whose runner is gone; "
                                    "`shardctl op resume " + id + "` finishes it"));
  }
  return out;
}

}  // namespace shardctl::check
