#include "stats/store.hpp"

#include "core/error.hpp"

namespace shardctl::stats {
namespace {

Counters counters_of(const nlohmann::json& j) {
  Counters out;
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.value().is_number()) out[it.key()] = it.value().get<double>();
  return out;
}

// One histogram slice as stored. Snapshots of catalog schema 7 and older have no live_bytes.
Slice slice_of(routing::KeyType bound, const nlohmann::json& sl) {
  Slice out{routing::parse_key(bound, sl.at("low").get<std::string>()), sl.at("rows").get<std::int64_t>(),
            sl.at("bytes").get<std::int64_t>(), sl.value("load", 0.0), sl.value("single_key", false), std::nullopt};
  if (auto it = sl.find("live_bytes"); it != sl.end() && it->is_number()) out.live_bytes = it->get<std::int64_t>();
  return out;
}

// A shard's status as stats_shards holds it: the catalog's word when collected.
catalog::ShardStatus stored_status(std::string_view word) {
  for (auto s : {catalog::ShardStatus::online, catalog::ShardStatus::readonly, catalog::ShardStatus::offline})
    if (catalog::to_text(s) == word) return s;
  throw internal_error("unknown shard status '" + std::string(word) + "' in shardctl.stats_shards");
}

// The snapshot's head row (stats_snapshots): id, time, filters, fingerprint, maps, age; none yet: nothing.
std::optional<Snapshot> read_head(pqxx::work& tx, const std::optional<std::string>& map) {
  auto head = tx.exec_params(
      "SELECT snapshot_id, to_char(taken_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), map_filter, load_file, "
      "fingerprint, maps::text, extract(epoch FROM now() - taken_at)::float8 "
      "FROM shardctl.stats_snapshots WHERE $1::text IS NULL OR map_filter IS NULL OR map_filter = $1 "
      "ORDER BY snapshot_id DESC LIMIT 1",
      map);
  if (head.empty()) return std::nullopt;
  Snapshot s;
  const auto& h = head[0];
  s.id = h[0].as<std::int64_t>();
  s.taken_at = h[1].as<std::string>();
  if (!h[2].is_null()) s.map_filter = h[2].as<std::string>();
  if (!h[3].is_null()) s.load_file = h[3].as<std::string>();
  s.fingerprint = h[4].as<std::string>();
  for (const auto& m : nlohmann::json::parse(h[5].as<std::string>()))
    s.maps.push_back(MapInfo{m.at("name").get<std::string>(), parse_word<routing::MapKind>(m.at("kind").get<std::string>()),
                             routing::parse_key_type(m.at("key_type").get<std::string>()), m.at("version").get<std::int64_t>()});
  s.age_seconds = h[6].as<double>();
  return s;
}

void read_shards(pqxx::work& tx, Snapshot& s) {
  for (const auto& r : tx.exec_params(
           "SELECT shard, status, error, db_bytes, counters::text, deltas::text, interval_seconds, capacity_bytes, weight, "
           "live_bytes "
           "FROM shardctl.stats_shards WHERE snapshot_id = $1 ORDER BY shard",
           s.id)) {
    ShardStats sh;
    sh.shard = r[0].as<std::string>();
    sh.status = stored_status(r[1].as<std::string>());
    if (!r[2].is_null()) sh.error = r[2].as<std::string>();
    sh.db_bytes = r[3].is_null() ? 0 : r[3].as<std::int64_t>();
    auto counters = nlohmann::json::parse(r[4].as<std::string>());
    if (counters.contains("total")) sh.counters = counters_of(counters["total"]);
    if (counters.contains("tables") && counters["tables"].is_object())
      for (auto it = counters["tables"].begin(); it != counters["tables"].end(); ++it)
        sh.table_counters[it.key()] = counters_of(it.value());
    sh.deltas = counters_of(nlohmann::json::parse(r[5].as<std::string>()));
    if (!r[6].is_null()) sh.interval_seconds = r[6].as<double>();
    if (!r[7].is_null()) sh.capacity_bytes = r[7].as<std::int64_t>();
    sh.weight = r[8].as<double>();
    if (!r[9].is_null()) sh.live_bytes = r[9].as<std::int64_t>();
    s.shards.push_back(std::move(sh));
  }
}

void read_mappings(pqxx::work& tx, Snapshot& s) {
  for (const auto& r : tx.exec_params(
           "SELECT mapping_id, map, map_version, shard, is_point, low, high, rows, bytes, load, histogram::text, live_bytes "
           "FROM shardctl.stats_mappings WHERE snapshot_id = $1 ORDER BY map, mapping_id",
           s.id)) {
    MappingStats m;
    m.mapping_id = r[0].as<std::int64_t>();
    m.map = r[1].as<std::string>();
    m.map_version = r[2].as<std::int64_t>();
    m.shard = r[3].as<std::string>();
    m.is_point = r[4].as<bool>();
    const MapInfo* mi = s.map(m.map);
    if (!mi) throw data_error("stats snapshot " + std::to_string(s.id) + " has a mapping of map " + m.map + " it does not describe");
    auto bt = bound_type(*mi);
    auto kt = m.is_point ? mi->key_type : bt;
    if (!r[5].is_null()) m.range.low = routing::parse_key(kt, r[5].as<std::string>());
    if (!r[6].is_null()) m.range.high = routing::parse_key(bt, r[6].as<std::string>());
    m.rows = r[7].as<std::int64_t>();
    m.bytes = r[8].as<std::int64_t>();
    m.load = r[9].as<double>();
    if (!r[11].is_null()) m.live_bytes = r[11].as<std::int64_t>();
    for (const auto& sl : nlohmann::json::parse(r[10].as<std::string>())) m.slices.push_back(slice_of(bt, sl));
    s.mappings.push_back(std::move(m));
  }
}

}  // namespace

void save_snapshot(pg::Connection& catalog, Snapshot& s) {
  nlohmann::json maps = nlohmann::json::array();
  for (const auto& m : s.maps)
    maps.push_back(to_json(m));
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& sh : s.shards)
    shards.push_back({{"shard", sh.shard},
                      {"status", catalog::to_text(sh.status)},
                      {"error", sh.error ? nlohmann::json(*sh.error) : nlohmann::json(nullptr)},
                      {"db_bytes", sh.db_bytes},
                      {"live_bytes", sh.live_bytes ? nlohmann::json(*sh.live_bytes) : nlohmann::json(nullptr)},
                      {"counters", {{"total", sh.counters}, {"tables", sh.table_counters}}},
                      {"deltas", sh.deltas},
                      {"interval_seconds", sh.interval_seconds ? nlohmann::json(*sh.interval_seconds) : nlohmann::json(nullptr)},
                      {"capacity_bytes", sh.capacity_bytes ? nlohmann::json(*sh.capacity_bytes) : nlohmann::json(nullptr)},
                      {"weight", sh.weight}});
  nlohmann::json mappings = nlohmann::json::array();
  for (const auto& m : s.mappings) mappings.push_back(to_json(m));
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& [map, list] : s.key_loads)
    for (const auto& [k, w] : list) keys.push_back({{"map", map}, {"key", k}, {"load", w}});

  catalog.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params1(
        "INSERT INTO shardctl.stats_snapshots (map_filter, load_file, fingerprint, complete, maps) "
        "VALUES ($1, $2, $3, true, $4::jsonb) "
        "RETURNING snapshot_id, to_char(taken_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')",
        s.map_filter, s.load_file, s.fingerprint, maps.dump());
    s.id = r[0].as<std::int64_t>();
    s.taken_at = r[1].as<std::string>();
    tx.exec_params(
        "INSERT INTO shardctl.stats_shards (snapshot_id, shard, status, error, db_bytes, live_bytes, counters, deltas, "
        "interval_seconds, capacity_bytes, weight) "
        "SELECT $1, x.shard, x.status, x.error, x.db_bytes, x.live_bytes, x.counters, x.deltas, x.interval_seconds, "
        "x.capacity_bytes, x.weight "
        "FROM jsonb_to_recordset($2::jsonb) AS x(shard text, status text, error text, db_bytes bigint, live_bytes bigint, "
        "counters jsonb, deltas jsonb, interval_seconds float8, capacity_bytes bigint, weight float8)",
        s.id, shards.dump());
    tx.exec_params(
        "INSERT INTO shardctl.stats_mappings (snapshot_id, mapping_id, map, map_version, shard, is_point, low, high, rows, bytes, "
        "live_bytes, load, histogram) "
        "SELECT $1, x.mapping_id, x.map, x.map_version, x.shard, x.is_point, x.low, x.high, x.rows, x.bytes, x.live_bytes, "
        "x.load, x.histogram "
        "FROM jsonb_to_recordset($2::jsonb) AS x(mapping_id bigint, map text, map_version bigint, shard text, is_point boolean, "
        "low text, high text, rows bigint, bytes bigint, live_bytes bigint, load float8, histogram jsonb)",
        s.id, mappings.dump());
    tx.exec_params(
        "INSERT INTO shardctl.stats_keys (snapshot_id, map, key, load) "
        "SELECT $1, x.map, x.key, x.load FROM jsonb_to_recordset($2::jsonb) AS x(map text, key text, load float8)",
        s.id, keys.dump());
  });
}

std::optional<Snapshot> latest_snapshot(pg::Connection& catalog, const std::optional<std::string>& map) {
  std::optional<Snapshot> out;
  catalog.read([&](pqxx::work& tx) {
    out = read_head(tx, map);
    if (!out) return;
    read_shards(tx, *out);
    read_mappings(tx, *out);
    for (const auto& r : tx.exec_params("SELECT map, key, load FROM shardctl.stats_keys WHERE snapshot_id = $1 ORDER BY map, key", out->id))
      out->key_loads[r[0].as<std::string>()].emplace_back(r[1].as<std::string>(), r[2].as<double>());
  });
  return out;
}

std::int64_t map_version(pg::Connection& catalog, const std::string& map) {
  std::int64_t v = 0;
  catalog.read([&](pqxx::work& tx) {
    auto r = tx.exec_params("SELECT version FROM shardctl.maps WHERE name = $1", map);
    if (r.empty()) throw usage_error("unknown map " + map, "`shardctl map list` shows the maps");
    v = r[0][0].as<std::int64_t>();
  });
  return v;
}

}  // namespace shardctl::stats
