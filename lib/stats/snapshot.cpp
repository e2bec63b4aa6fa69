#include "stats/snapshot.hpp"

#include "catalog/key_sql.hpp"
#include "digest/sha256.hpp"

namespace shardctl::stats {

const MapInfo* Snapshot::map(const std::string& name) const {
  for (const auto& m : maps)
    if (m.name == name) return &m;
  return nullptr;
}

routing::KeyType bound_type(const MapInfo& map) { return catalog::bound_type(map.kind, map.key_type); }

namespace {

nlohmann::json opt_key(const std::optional<routing::Key>& k) {
  return k ? nlohmann::json(routing::format_key(*k)) : nlohmann::json(nullptr);
}

nlohmann::json opt_bytes(const std::optional<std::int64_t>& b) { return b ? nlohmann::json(*b) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json to_json(const MapInfo& m) {
  return {{"name", m.name},
          {"kind", std::string(to_text(m.kind))},
          {"key_type", std::string(to_text(m.key_type))},
          {"version", m.version}};
}

nlohmann::json to_json(const MappingStats& m) {
  nlohmann::json slices = nlohmann::json::array();
  for (const auto& sl : m.slices)
    slices.push_back({{"low", routing::format_key(sl.low)},
                      {"rows", sl.rows},
                      {"bytes", sl.bytes},
                      {"live_bytes", opt_bytes(sl.live_bytes)},
                      {"load", sl.load},
                      {"single_key", sl.single_key}});
  return {{"mapping_id", m.mapping_id},
          {"map", m.map},
          {"map_version", m.map_version},
          {"shard", m.shard},
          {"is_point", m.is_point},
          {"low", opt_key(m.range.low)},
          {"high", m.is_point ? nlohmann::json(nullptr) : opt_key(m.range.high)},
          {"rows", m.rows},
          {"bytes", m.bytes},
          {"live_bytes", opt_bytes(m.live_bytes)},
          {"load", m.load},
          {"histogram", std::move(slices)}};
}

namespace {

nlohmann::json measured(const Snapshot& s, bool with_table_counters) {
  nlohmann::json maps = nlohmann::json::array();
  for (const auto& m : s.maps)
    maps.push_back(to_json(m));
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& sh : s.shards) {
    nlohmann::json j = {{"shard", sh.shard},
                        {"status", catalog::to_text(sh.status)},
                        {"db_bytes", sh.db_bytes},
                        {"live_bytes", opt_bytes(sh.live_bytes)},
                        {"counters", sh.counters},
                        {"deltas_per_second", sh.deltas},
                        {"interval_seconds", sh.interval_seconds ? nlohmann::json(*sh.interval_seconds) : nlohmann::json(nullptr)},
                        {"capacity_bytes", sh.capacity_bytes ? nlohmann::json(*sh.capacity_bytes) : nlohmann::json(nullptr)},
                        {"weight", sh.weight},
                        {"error", sh.error ? nlohmann::json(*sh.error) : nlohmann::json(nullptr)}};
    if (with_table_counters) j["table_counters"] = sh.table_counters;
    shards.push_back(std::move(j));
  }
  nlohmann::json mappings = nlohmann::json::array();
  for (const auto& m : s.mappings) mappings.push_back(to_json(m));
  nlohmann::json keys = nlohmann::json::object();
  for (const auto& [map, list] : s.key_loads) {
    auto& arr = keys[map] = nlohmann::json::array();
    for (const auto& [k, w] : list) arr.push_back({{"key", k}, {"load", w}});
  }
  return {{"maps", std::move(maps)}, {"shards", std::move(shards)}, {"mappings", std::move(mappings)}, {"key_loads", std::move(keys)}};
}

}  // namespace

nlohmann::json to_json(const Snapshot& s) {
  nlohmann::json j = measured(s, false);
  j["snapshot_id"] = s.id;
  j["taken_at"] = s.taken_at;
  j["age_seconds"] = s.age_seconds;
  j["map_filter"] = s.map_filter ? nlohmann::json(*s.map_filter) : nlohmann::json(nullptr);
  j["load_file"] = s.load_file ? nlohmann::json(*s.load_file) : nlohmann::json(nullptr);
  j["fingerprint"] = s.fingerprint;
  return j;
}

std::string fingerprint(const Snapshot& s) {
  digest::Sha256 h;
  h.update(measured(s, true).dump());
  return h.hex_digest();
}

}  // namespace shardctl::stats
