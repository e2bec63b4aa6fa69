#include "rebalance/fleet.hpp"

#include <algorithm>
#include <set>

#include "catalog/catalog.hpp"
#include "catalog/key_sql.hpp"
#include "catalog/operation_sql.hpp"
#include "core/error.hpp"
#include "stats/render.hpp"
#include "stats/store.hpp"

namespace shardctl::rebalance {
namespace {

// The key ranges unfinished operations claim, per map (bound type; a list point as its key).
struct Claim {
  std::string map;
  routing::KeyRange range;
  bool whole_map = false;
  std::string op;
};

std::vector<Claim> live_claims(pg::Connection& catalog, const stats::Snapshot& snapshot) {
  std::vector<Claim> out;
  catalog.read([&](pqxx::work& tx) {
    auto rows = tx.exec(
        "SELECT o.op_id::text, m.name, lower(o.int_range)::text, upper(o.int_range)::text, lower(o.text_range), upper(o.text_range), "
        "lower(o.uuid_range)::text, upper(o.uuid_range)::text, "
        "(o.int_range IS NULL AND o.text_range IS NULL AND o.uuid_range IS NULL) "
        "FROM shardctl.operations o JOIN shardctl.maps m USING (map_id) "
        "WHERE " + catalog::operation_is_live("o"));
    for (const auto& r : rows) {
      Claim c;
      c.op = r[0].as<std::string>();
      c.map = r[1].as<std::string>();
      const stats::MapInfo* mi = snapshot.map(c.map);
      if (!mi) continue;
      auto bt = stats::bound_type(*mi);
      if (r[8].as<bool>()) {
        c.whole_map = true;
      } else {
        for (int base : {2, 4, 6}) {
          if (!r[base].is_null()) c.range.low = routing::parse_key(bt, r[base].as<std::string>());
          if (!r[base + 1].is_null()) c.range.high = routing::parse_key(bt, r[base + 1].as<std::string>());
        }
        // A list point is journaled as [k,k]: make it half-open.
        if (c.range.low && c.range.high && routing::compare_keys(*c.range.low, *c.range.high) == 0)
          c.range.high = routing::key_successor(bt, *c.range.high);
      }
      out.push_back(std::move(c));
    }
  });
  return out;
}

}  // namespace

MeasuredSizes measured_sizes(const stats::Snapshot& snapshot) {
  MeasuredSizes out;
  out.live = std::all_of(snapshot.mappings.begin(), snapshot.mappings.end(),
                         [](const stats::MappingStats& m) {
                           return m.live_bytes && std::all_of(m.slices.begin(), m.slices.end(),
                                                              [](const stats::Slice& sl) { return sl.live_bytes.has_value(); });
                         });
  if (!out.live)
    out.notes.push_back("stats snapshot " + std::to_string(snapshot.id) +
                        " has no live bytes (taken before shardctl measured them): planning on physical sizes, which count "
                        "the dead space of deleted rows; run shardctl stats collect");
  std::map<std::string, std::int64_t> mapped;  // what the planner counts of each shard's mappings
  for (const auto& m : snapshot.mappings) {
    const stats::MapInfo* mi = snapshot.map(m.map);
    if (!mi) throw data_error("stats snapshot " + std::to_string(snapshot.id) + " has a mapping of map " + m.map + " it does not describe");
    planner::Mapping pm;
    pm.map = m.map;
    pm.is_point = m.is_point;
    pm.range = m.is_point ? routing::point_range(stats::bound_type(*mi), *m.range.low) : m.range;
    pm.shard = m.shard;
    pm.rows = m.rows;
    pm.bytes = out.live ? *m.live_bytes : m.bytes;
    mapped[m.shard] += pm.bytes;
    pm.load = m.load;
    for (const auto& sl : m.slices)
      pm.slices.push_back(planner::Slice{sl.low, sl.rows, out.live ? *sl.live_bytes : sl.bytes, sl.load, sl.single_key});
    out.mappings.push_back(std::move(pm));
  }
  for (const auto& sh : snapshot.shards) {
    // Live: the shard's live size (its database less its sharded tables' dead space, rows of
    // no mapping of its own included) less its mappings'; a shard that gave every mapping away
    // keeps none of its tables' dead space. Physical: its database less its mappings.
    std::int64_t whole = out.live && sh.live_bytes ? *sh.live_bytes : sh.db_bytes;
    out.fixed_bytes[sh.shard] = std::max<std::int64_t>(0, whole - mapped[sh.shard]);
    // Say where the plan and the disk disagree most: a shard whose data is mostly dead space.
    if (out.live && sh.live_bytes && sh.db_bytes > 0 && *sh.live_bytes < sh.db_bytes / 2)
      out.notes.push_back("shard " + sh.shard + ": " + stats::human_bytes(sh.db_bytes - *sh.live_bytes) + " of its " +
                          stats::human_bytes(sh.db_bytes) + " is dead space (deleted rows not yet reused): planned as " +
                          stats::human_bytes(*sh.live_bytes));
  }
  return out;
}

namespace {

// The catalog's shard status as the planner takes it.
planner::ShardStatus planner_status(catalog::ShardStatus status) noexcept {
  switch (status) {
    case catalog::ShardStatus::online: return planner::ShardStatus::online;
    case catalog::ShardStatus::readonly: return planner::ShardStatus::readonly;
    case catalog::ShardStatus::offline: return planner::ShardStatus::offline;
  }
  return planner::ShardStatus::offline;
}

// The snapshot's maps that still exist, each refused when its mappings changed since the collect.
std::vector<planner::Map> current_maps(pg::Connection& catalog, catalog::Store& store, const stats::Snapshot& snapshot,
                                       const std::optional<std::string>& map) {
  if (map) {
    store.get_map(*map);  // usage Error when unknown
    if (!snapshot.map(*map))
      throw usage_error("stats snapshot " + std::to_string(snapshot.id) + " has no stats for map " + *map,
                        "run shardctl stats collect --map " + *map);
  }
  std::vector<planner::Map> out;
  for (const auto& mi : snapshot.maps) {
    std::int64_t now = 0;
    try {
      now = stats::map_version(catalog, mi.name);
    } catch (const Error&) {
      continue;  // dropped since: nothing of it to plan
    }
    if (now != mi.version)
      throw usage_error("stats snapshot " + std::to_string(snapshot.id) + " describes map " + mi.name + " at version " +
                            std::to_string(mi.version) + "; its mappings changed since (version " + std::to_string(now) + ")",
                        "run shardctl stats collect");
    out.push_back(planner::Map{mi.name, mi.kind, stats::bound_type(mi)});
  }
  return out;
}

// Every shard of the catalog now: its status, capacity and weight from the config, its fixed
// bytes from the snapshot (none for a shard added since).
std::vector<planner::Shard> current_shards(catalog::Store& store, const config::Config& config, const MeasuredSizes& sizes,
                                           const stats::Snapshot& snapshot, std::vector<std::string>& notes) {
  std::vector<planner::Shard> out;
  for (const auto& s : store.list_shards()) {
    planner::Shard ps;
    ps.name = s.name;
    ps.status = planner_status(s.status);
    if (const auto* sc = config.shard(s.name)) {
      ps.capacity_bytes = sc->capacity_bytes.value_or(0);
      ps.weight = sc->weight;
    }
    auto fixed = sizes.fixed_bytes.find(s.name);
    if (fixed != sizes.fixed_bytes.end()) ps.fixed_bytes = fixed->second;
    else notes.push_back("shard " + s.name + " was added after stats snapshot " + std::to_string(snapshot.id) + ": counted as empty");
    out.push_back(std::move(ps));
  }
  return out;
}

// Holds `pm` (the planner never moves or splits it) when a live operation claims its keys or the
// catalog has it offline now; says why in `notes`.
void hold_if_busy(planner::Mapping& pm, const stats::MappingStats& m, const std::vector<Claim>& claims,
                  const std::set<std::int64_t>& offline, std::vector<std::string>& notes) {
  for (const auto& c : claims)
    if (c.map == m.map && (c.whole_map || routing::ranges_overlap(c.range, pm.range))) {
      pm.held = true;
      notes.push_back("mapping " + (m.is_point ? routing::format_key(*m.range.low) : routing::format_range(m.range)) + " of map " +
                      m.map + " is held by operation " + c.op + ": it stays where it is");
      break;
    }
  if (offline.count(m.mapping_id) && !pm.held) {
    pm.held = true;
    notes.push_back("mapping " + routing::format_range(m.range) + " of map " + m.map + " is offline: it stays where it is");
  }
}

}  // namespace

FleetInput build_fleet(pg::Connection& catalog, const config::Config& config, const stats::Snapshot& snapshot,
                       const std::optional<std::string>& map) {
  FleetInput in;
  catalog::Store store(catalog, catalog::Writes::preview);
  in.fleet.maps = current_maps(catalog, store, snapshot, map);
  auto sizes = measured_sizes(snapshot);
  in.notes = sizes.notes;
  in.fleet.shards = current_shards(store, config, sizes, snapshot, in.notes);

  auto claims = live_claims(catalog, snapshot);
  std::set<std::int64_t> offline;  // mapping ids offline now
  for (const auto& m : store.list_mappings(std::nullopt))
    if (m.status != catalog::MappingStatus::online) offline.insert(m.id);
  for (std::size_t i = 0; i < snapshot.mappings.size(); ++i) {
    const auto& m = snapshot.mappings[i];
    if (!in.fleet.maps.empty() &&
        std::none_of(in.fleet.maps.begin(), in.fleet.maps.end(), [&](const planner::Map& pm) { return pm.name == m.map; }))
      continue;
    planner::Mapping pm = std::move(sizes.mappings[i]);
    hold_if_busy(pm, m, claims, offline, in.notes);
    in.fleet.mappings.push_back(std::move(pm));
  }
  return in;
}

}  // namespace shardctl::rebalance
