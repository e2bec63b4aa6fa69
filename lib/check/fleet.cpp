#include "check/fleet.hpp"

#include <algorithm>

#include "catalog/key_sql.hpp"
#include "catalog/operation_sql.hpp"
#include "core/error.hpp"

namespace shardctl::check {

const catalog::LoadedMap& Fleet::map(const std::string& name) const {
  auto it = maps.find(name);
  if (it == maps.end()) throw internal_error("map " + name + " was not loaded");
  return it->second;
}

const catalog::Shard* Fleet::shard(const std::string& name) const {
  for (const auto& s : shards)
    if (s.name == name) return &s;
  return nullptr;
}

bool Fleet::map_uses_shard(const std::string& map_name, const std::string& shard_name) const {
  for (const auto& m : map(map_name).mappings)
    if (m.shard == shard_name) return true;
  return false;
}

std::string catalog_now(pg::Connection& conn) {
  std::string now;
  conn.read([&](pqxx::work& tx) { now = tx.exec("SELECT now()::text")[0][0].as<std::string>(); });
  return now;
}

Fleet load_fleet(pg::Connection& conn, const std::string& since) {
  catalog::Store store(conn);
  Fleet fleet;
  fleet.shards = store.list_shards();
  for (const auto& m : store.list_maps()) fleet.maps.emplace(m.name, store.load_map(m.name));
  for (auto& t : store.list_tables())
    if (t.kind == catalog::TableKind::sharded) fleet.sharded_tables.push_back(std::move(t));
  fleet.xrefs = store.list_xrefs();
  conn.read([&](pqxx::work& tx) {
    // An operation that finished after the check began still moved rows under it: the
    // timestamps catch it. One whose transactions began before `since` but committed later
    // was unfinished when an earlier read of this run saw it, or its finished_at is later.
    // 'infinity': no time bound, only unfinished operations.
    std::string from = since.empty() ? "infinity" : since;
    for (const auto& r : tx.exec_params(
             "SELECT o.op_id::text, " + catalog::operation_is_live("o") + ", mp.name, "
             "coalesce(lower(o.int_range)::text, lower(o.text_range)::text, lower(o.uuid_range)::text), "
             "coalesce(upper(o.int_range)::text, upper(o.text_range)::text, upper(o.uuid_range)::text) "
             "FROM shardctl.operations o LEFT JOIN shardctl.maps mp USING (map_id) "
             "WHERE " + catalog::operation_is_live("o") + " OR o.updated_at >= $1::timestamptz "
             "OR o.created_at >= $1::timestamptz OR o.finished_at >= $1::timestamptz ORDER BY o.created_at",
             from)) {
      std::string id = r[0].as<std::string>();
      if (r[1].as<bool>()) fleet.live_ops.insert(id);
      if (r[2].is_null()) continue;  // an operation on no map (a check's own fix journal) moves no keys
      auto it = fleet.maps.find(r[2].as<std::string>());
      if (it == fleet.maps.end()) continue;  // its map was created after the maps were read: the next view has it
      fleet.excluded_ops.insert(id);
      const auto& lm = it->second;
      auto type = catalog::bound_type(lm.map.kind, lm.map.key_type);
      routing::KeyRange range;  // an operation without a range covers the whole map
      if (!r[3].is_null()) range.low = routing::parse_key(type, r[3].as<std::string>());
      if (!r[4].is_null()) range.high = routing::parse_key(type, r[4].as<std::string>());
      fleet.in_flight[lm.map.name].push_back(range);
      fleet.excluded_ranges[id] = {lm.map.name, std::move(range)};
    }
  });
  return fleet;
}

void carry_exclusions(const Fleet& earlier, Fleet& later) {
  for (const auto& [id, what] : earlier.excluded_ranges) {
    if (later.excluded_ops.count(id) || !later.maps.count(what.first)) continue;
    later.excluded_ops.insert(id);
    later.excluded_ranges[id] = what;
    later.in_flight[what.first].push_back(what.second);
  }
}

shardio::RouteSpace space_of(const catalog::LoadedMap& map) { return {map.map.kind, map.map.key_type}; }

std::string mapping_signature(const std::vector<catalog::Mapping>& mappings,
                              const std::vector<routing::KeyRange>& excluded) {
  std::vector<std::string> parts;
  for (const auto& m : mappings) {
    bool hidden = false;
    for (const auto& x : excluded)
      if (m.is_point ? (m.range.low && routing::range_contains(x, *m.range.low)) : routing::ranges_overlap(x, m.range))
        hidden = true;
    if (hidden) continue;
    parts.push_back((m.is_point ? routing::format_key(*m.range.low) : routing::format_range(m.range)) + ">" + m.shard +
                    ":" + std::string(catalog::to_text(m.status)));
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += p + "\n";
  return out;
}

bool fleet_moved(const Fleet& before, const Fleet& after) {
  for (const auto& id : after.excluded_ops)
    if (!before.excluded_ops.count(id)) return true;
  std::set<std::string> names;
  for (const auto& [name, lm] : before.maps) names.insert(name);
  for (const auto& [name, lm] : after.maps) names.insert(name);
  for (const auto& name : names) {
    auto b = before.maps.find(name), a = after.maps.find(name);
    if (b == before.maps.end() || a == after.maps.end()) return true;
    auto x = after.in_flight.find(name);
    std::vector<routing::KeyRange> excluded;
    if (x != after.in_flight.end()) excluded = x->second;
    if (mapping_signature(b->second.mappings, excluded) != mapping_signature(a->second.mappings, excluded)) return true;
  }
  return false;
}

}  // namespace shardctl::check
