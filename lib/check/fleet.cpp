#include "check/fleet.hpp"

#include "catalog/key_sql.hpp"
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

Fleet load_fleet(pg::Connection& conn) {
  catalog::Store store(conn);
  Fleet fleet;
  fleet.shards = store.list_shards();
  for (const auto& m : store.list_maps()) fleet.maps.emplace(m.name, store.load_map(m.name));
  for (auto& t : store.list_tables())
    if (t.kind == "sharded") fleet.sharded_tables.push_back(std::move(t));
  fleet.xrefs = store.list_xrefs();
  conn.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec(
             "SELECT o.op_id::text, coalesce(s.name, ''), coalesce(t.name, '') FROM shardctl.operations o "
             "LEFT JOIN shardctl.shards s ON s.shard_id = o.source_shard_id "
             "LEFT JOIN shardctl.shards t ON t.shard_id = o.target_shard_id "
             "WHERE o.status NOT IN ('done', 'cancelled')")) {
      fleet.live_ops.insert(r[0].as<std::string>());
      for (int i : {1, 2})
        if (!r[i].as<std::string>().empty()) fleet.shards_with_live_ops.insert(r[i].as<std::string>());
    }
    for (const auto& r : tx.exec(
             "SELECT mp.name, coalesce(lower(o.int_range)::text, lower(o.text_range)::text, lower(o.uuid_range)::text), "
             "coalesce(upper(o.int_range)::text, upper(o.text_range)::text, upper(o.uuid_range)::text) "
             "FROM shardctl.operations o JOIN shardctl.maps mp USING (map_id) "
             "WHERE o.status NOT IN ('done', 'cancelled')")) {
      const auto& lm = fleet.map(r[0].as<std::string>());
      auto type = catalog::bound_type(lm.map.kind, lm.map.key_type);
      routing::KeyRange range;  // an operation without a range covers the whole map
      if (!r[1].is_null()) range.low = routing::parse_key(type, r[1].as<std::string>());
      if (!r[2].is_null()) range.high = routing::parse_key(type, r[2].as<std::string>());
      fleet.in_flight[lm.map.name].push_back(std::move(range));
    }
    for (const auto& r : tx.exec("SELECT DISTINCT s.name FROM shardctl.guards g JOIN shardctl.shards s USING (shard_id) "
                                 "JOIN shardctl.operations o USING (op_id) WHERE o.status NOT IN ('done', 'cancelled')"))
      fleet.shards_with_live_ops.insert(r[0].as<std::string>());
  });
  return fleet;
}

migrate::RouteSpace space_of(const catalog::LoadedMap& map) { return {map.map.kind, map.map.key_type}; }

}  // namespace shardctl::check
