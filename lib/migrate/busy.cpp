// Operations in flight and offline mappings: both mean another operation owns the keys, which
// is a reason to wait (75), not a usage error.
#include "catalog/key_sql.hpp"
#include "catalog/operation_sql.hpp"
#include "core/error.hpp"
#include "migrate/preconditions.hpp"

namespace shardctl::migrate {

void refuse_if_operation_overlaps(pg::Connection& catalog, const catalog::Map& map, const catalog::RangeParams& claim,
                                  const std::string& what) {
  std::string column = catalog::range_column(map.kind, map.key_type);
  std::string ctor = catalog::range_constructor(map.kind, map.key_type);
  std::string id, kind, status, range;
  catalog.read([&](pqxx::work& tx) {
    auto r = tx.exec_params("SELECT op_id::text, kind, status, coalesce(lower(" + column + ")::text, '') || '..' || "
                            "coalesce(upper(" + column + ")::text, '') FROM shardctl.operations "
                            "WHERE map_id = $1 AND " + catalog::operation_is_live() + " AND " + column + " && " + ctor +
                            "($2, $3, $4) ORDER BY created_at LIMIT 1",
                            map.id, claim.low, claim.high, claim.bounds);
    if (r.empty()) return;
    id = r[0][0].as<std::string>();
    kind = r[0][1].as<std::string>();
    status = r[0][2].as<std::string>();
    range = r[0][3].as<std::string>();
  });
  if (id.empty()) return;
  throw locked_error("operation " + id + " (" + kind + ", " + status + ") already works on an overlapping range of map " +
                         map.name + ": " + range + " (asked: " + what + ")",
                     "wait for it: `shardctl op wait " + id + "` (or resume or cancel it)");
}

void refuse_if_offline(const Plan& plan, const std::vector<catalog::Mapping>& mappings) {
  for (const auto& m : mappings) {
    if (m.status == catalog::MappingStatus::online) continue;
    bool inside = m.is_point ? routing::range_contains(plan.range, *m.range.low) : routing::ranges_overlap(m.range, plan.range);
    if (!inside) continue;
    throw locked_error("mapping " + (m.is_point ? routing::format_key(*m.range.low) : routing::format_range(m.range)) +
                           " of map " + plan.map.name + " is offline: an operation is moving it",
                       "`shardctl op list` shows the operation; wait for it, resume it, or cancel it");
  }
}

}  // namespace shardctl::migrate
