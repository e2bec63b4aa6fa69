#include "stats/collect.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "catalog/catalog.hpp"
#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "fanout/fanout.hpp"
#include "routing/pg_hash.hpp"
#include "shardio/key_filter.hpp"
#include "pg/connect_retry.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/server_pool.hpp"
#include "stats/histogram.hpp"
#include "stats/load_file.hpp"
#include "stats/store.hpp"

namespace shardctl::stats {
namespace {

// The pg_stat_user_tables columns a snapshot keeps, in the order the query selects them.
constexpr const char* counter_names[] = {"seq_scan",  "seq_tup_read", "idx_scan",   "idx_tup_fetch", "n_tup_ins",
                                         "n_tup_upd", "n_tup_del",    "n_live_tup", "n_dead_tup"};
constexpr std::size_t counter_count = sizeof(counter_names) / sizeof(counter_names[0]);

struct TableJob {
  catalog::TableDef def;
  std::string quoted;  // "schema"."table"
  const MapInfo* map;
};

// One routing value of a table on a shard: its rows and what they occupy (see row_size_sql).
struct KeyRows {
  routing::Key key;
  std::int64_t rows = 0;
  double row_bytes = 0;
};

// One sharded table on one shard: its physical size and the live bytes of its rows.
struct TableSize {
  std::int64_t total = 0;  // pg_total_relation_size: heap, TOAST, indexes
  std::int64_t rows = 0;
  double live = 0;         // the rows' bytes with their share of the indexes, at most `total`
  double live_per_row_byte = 0;  // live / the rows' summed row_bytes: scales a key's row_bytes
};

// What one shard gave: its row of the snapshot and the keys of each table.
struct ShardResult {
  ShardStats stats;
  std::map<std::string, TableSize> tables;              // display name -> sizes
  std::map<std::string, std::vector<KeyRows>> keys;     // display name -> its keys
};

// The bytes a row of the table occupies in its heap (and TOAST), as one SQL expression the
// server builds from pg_attribute (every column quoted by format's %I): each stored value's
// size as stored (pg_column_size never fetches a TOASTed value: it reads the size from the
// pointer), plus the tuple header and line pointer. Summed in the scan that counts the keys, it
// costs no read of its own, counts only the rows the scan sees (live ones: never the dead space
// deleted rows leave until VACUUM FULL), and needs no ANALYZE: pg_class.reltuples and
// pg_stats.avg_width are only as new as the last VACUUM or ANALYZE, and n_live_tup is a
// counter for the whole table, not per key.
constexpr const char* row_size_sql =
    "SELECT coalesce(string_agg(format('coalesce(pg_column_size(%I), 0)', attname), ' + ' ORDER BY attnum), '0') "
    "FROM pg_attribute WHERE attrelid = $1::oid AND attnum > 0 AND NOT attisdropped";
constexpr double tuple_overhead_bytes = 24 + 4;  // MAXALIGNed heap tuple header + line pointer

// A table's live bytes: its rows' bytes, its indexes added in the proportion the table has them
// (index size over heap+TOAST size: deleted rows leave both as bloated as each other), never
// more than the table takes on disk.
TableSize table_size(std::int64_t total, std::int64_t heap_and_toast, std::int64_t rows, double row_bytes) {
  TableSize t;
  t.total = total;
  t.rows = rows;
  if (row_bytes <= 0) return t;
  double with_indexes = row_bytes * static_cast<double>(total) / static_cast<double>(std::max<std::int64_t>(heap_and_toast, 1));
  t.live = std::min(static_cast<double>(total), std::max(row_bytes, with_indexes));
  t.live_per_row_byte = t.live / row_bytes;
  return t;
}

Counters rates(const Counters& now, const Counters& before, double seconds) {
  Counters out;
  if (seconds <= 0) return out;
  for (const auto& [name, v] : now) {
    auto it = before.find(name);
    if (it == before.end() || v < it->second) continue;  // new, or the server's stats were reset
    out[name] = (v - it->second) / seconds;
  }
  return out;
}

// The load a table's rows carry per second: writes and index fetches (the collect's own scans
// are sequential, so they do not count).
double table_ops(const Counters& deltas) {
  double ops = 0;
  for (const char* c : {"n_tup_ins", "n_tup_upd", "n_tup_del", "idx_tup_fetch"}) {
    auto it = deltas.find(c);
    if (it != deltas.end()) ops += it->second;
  }
  return ops;
}

// One sharded table on a shard (its pg_stat_user_tables row `stat`, by OID `oid`): its counters,
// its keys with their rows and row bytes in one scan, and its sizes. Returns its dead bytes
// (physical minus live).
std::int64_t measure_table(shardio::RawConn& conn, const TableJob& job, const std::string& oid,
                           const std::vector<std::string>& stat, std::size_t first_counter, ShardResult& out) {
  auto& tc = out.stats.table_counters[job.def.name];
  for (std::size_t i = 0; i < counter_count; ++i) tc[counter_names[i]] = std::stod(stat[first_counter + i]);
  shardio::RouteSpace space{job.map->kind, job.map->key_type};
  std::string col = catalog::quote_ident(*job.def.key_column);
  std::string row_bytes = conn.query(row_size_sql, {oid}).at(0).at(0);
  std::string sql = "SELECT k::text, n::text, b::text FROM (SELECT " + shardio::route_expression(space, col) +
                    " AS k, count(*) AS n, sum(" + std::to_string(static_cast<int>(tuple_overhead_bytes)) + " + " + row_bytes +
                    ") AS b FROM " + job.quoted + " WHERE " + col + " IS NOT NULL GROUP BY 1) s";
  auto bt = bound_type(*job.map);
  auto& keys = out.keys[job.def.name];
  std::int64_t table_rows = 0;
  double table_row_bytes = 0;
  for (auto& r : conn.query(sql)) {
    keys.push_back(KeyRows{routing::parse_key(bt, r[0]), std::stoll(r[1]), std::stod(r[2])});
    table_rows += keys.back().rows;
    table_row_bytes += keys.back().row_bytes;
  }
  auto& size = out.tables[job.def.name] = table_size(std::stoll(stat[1]), std::stoll(stat[2]), table_rows, table_row_bytes);
  return size.total - static_cast<std::int64_t>(size.live);
}

// One shard: its database size, pg_stat_user_tables counters summed over its tables, then each
// sharded table (measure_table); a table missing here is the shard's error.
void measure_shard(const fanout::Target& t, const std::vector<TableJob>& tables, int connect_timeout, ShardResult& out,
                   shardio::ServerPool& pool) {
  auto lease = pool.acquire(fanout::dsn_with_timeout(t.dsn, connect_timeout), "shard " + t.shard);
  shardio::RawConn& conn = *lease;
  auto size = conn.query("SELECT pg_database_size(current_database())::text");
  out.stats.db_bytes = std::stoll(size.at(0).at(0));
  std::string cols;
  for (const char* c : counter_names) {
    cols += ", coalesce(";
    cols += c;
    cols += ", 0)::text";
  }
  constexpr std::size_t first_counter = 3;
  auto rows = conn.query("SELECT relid::oid::text, pg_total_relation_size(relid)::text, pg_table_size(relid)::text" + cols +
                         " FROM pg_stat_user_tables WHERE schemaname NOT LIKE 'shardctl%'");
  std::map<std::string, const std::vector<std::string>*> by_name;
  for (const auto& r : rows) {
    by_name[r[0]] = &r;
    for (std::size_t i = 0; i < counter_count; ++i) out.stats.counters[counter_names[i]] += std::stod(r[first_counter + i]);
  }
  std::int64_t dead_bytes = 0;  // of the sharded tables: physical minus live
  std::vector<std::string> missing;
  for (const auto& job : tables) {
    // By OID: the catalog's spelling of a name and pg_stat_user_tables' need not match.
    auto oid = conn.query("SELECT coalesce(to_regclass($1)::oid::text, '')", {job.quoted});
    auto it = by_name.find(oid.at(0).at(0));
    if (it == by_name.end()) {
      missing.push_back(job.def.name);
      continue;
    }
    dead_bytes += measure_table(conn, job, it->first, *it->second, first_counter, out);
  }
  out.stats.live_bytes = std::max<std::int64_t>(0, out.stats.db_bytes - dead_bytes);
  if (!missing.empty()) {
    std::string m = "tables missing on this shard: ";
    for (std::size_t i = 0; i < missing.size(); ++i) m += (i ? ", " : "") + missing[i];
    out.stats.error = m;
  }
}

// Per map: the load file's keys in bound type, sorted.
using LoadIndex = std::vector<std::pair<routing::Key, double>>;

LoadIndex load_index(const MapInfo& map, const std::vector<KeyLoad>& loads, const std::string& path,
                     std::vector<std::pair<std::string, double>>& shown) {
  LoadIndex out;
  for (const auto& l : loads) {
    routing::Key k;
    try {
      k = routing::parse_key(map.key_type, l.key);
    } catch (const Error& e) {
      throw data_error(path + ":" + std::to_string(l.line) + ": " + e.what());
    }
    shown.emplace_back(routing::format_key(k), l.weight);
    if (map.kind == routing::MapKind::hash) k = routing::Key{routing::hash_key(map.key_type, k)};
    out.emplace_back(std::move(k), l.weight);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return routing::compare_keys(a.first, b.first) < 0; });
  // Two keys may share a hash value: their loads add up.
  LoadIndex merged;
  for (auto& e : out) {
    if (!merged.empty() && routing::compare_keys(merged.back().first, e.first) == 0) merged.back().second += e.second;
    else merged.push_back(std::move(e));
  }
  return merged;
}

bool in_mapping(const MappingStats& m, const routing::Key& k) {
  if (m.is_point) return routing::compare_keys(*m.range.low, k) == 0;
  return routing::range_contains(m.range, k);
}

// The maps to collect: --map, or every map.
std::vector<catalog::Map> maps_to_collect(catalog::Store& store, const CollectOptions& o) {
  std::vector<catalog::Map> maps;
  if (o.map) maps.push_back(store.get_map(*o.map));
  else maps = store.list_maps();
  if (maps.empty()) throw usage_error("there is no map to collect stats for", "create one with `shardctl map create`");
  return maps;
}

// The sharded tables of the snapshot's maps: what each shard measures.
std::vector<TableJob> table_jobs(catalog::Store& store, const Snapshot& snap) {
  std::vector<TableJob> tables;
  for (auto& t : store.list_tables()) {
    if (t.kind != catalog::TableKind::sharded || !t.map) continue;
    const MapInfo* mi = snap.map(*t.map);
    if (!mi) continue;
    std::string quoted = catalog::quote_qualified(t.name);
    tables.push_back(TableJob{std::move(t), std::move(quoted), mi});
  }
  return tables;
}

// --load-file: the keys' loads of the one map collected (shown as read in snap.key_loads).
std::map<std::string, LoadIndex> load_file_keys(const CollectOptions& o, Snapshot& snap) {
  std::map<std::string, LoadIndex> loads;  // map -> keys
  if (!o.load_file) return loads;
  if (snap.maps.size() != 1)
    throw usage_error("--load-file needs --map: the keys of a load file belong to one map", "add --map MAP");
  auto parsed = read_load_file(*o.load_file);
  const MapInfo& mi = snap.maps.front();
  loads[mi.name] = load_index(mi, parsed, *o.load_file, snap.key_loads[mi.name]);
  return loads;
}

// Every mapping of the snapshot's maps, not measured yet.
void add_mappings(catalog::Store& store, Snapshot& snap) {
  for (const auto& mi : snap.maps)
    for (const auto& m : store.list_mappings(mi.name)) {
      MappingStats ms;
      ms.mapping_id = m.id;
      ms.map = mi.name;
      ms.map_version = mi.version;
      ms.shard = m.shard;
      ms.is_point = m.is_point;
      ms.range = m.range;
      snap.mappings.push_back(std::move(ms));
    }
}

// One result per catalog shard (status, capacity and weight), measured on every shard that is not
// offline, all at once. A shard that failed stops the collect: nothing is recorded.
std::vector<ShardResult> measure_shards(catalog::Store& store, const config::Config& config, const std::vector<TableJob>& tables,
                                        const CollectOptions& o) {
  std::vector<fanout::Target> targets;
  std::vector<ShardResult> results;
  for (const auto& s : store.list_shards()) {
    ShardResult r;
    r.stats.shard = s.name;
    r.stats.status = s.status;
    if (const auto* sc = config.shard(s.name)) {
      r.stats.capacity_bytes = sc->capacity_bytes;
      r.stats.weight = sc->weight;
    }
    results.push_back(std::move(r));
    if (s.status != catalog::ShardStatus::offline) targets.push_back(fanout::Target{s.name, s.dsn, s.status});
  }
  std::unordered_map<std::string, std::size_t> slot;
  for (std::size_t i = 0; i < results.size(); ++i) slot.emplace(results[i].stats.shard, i);
  // Every connection to the shards comes from one pool: at most --parallel per server.
  shardio::ServerPool pool(o.parallel);
  auto outcomes = fanout::run(targets, fanout::Policy{o.parallel, false}, [&](const fanout::Target& t) {
    measure_shard(t, tables, o.connect_timeout, results.at(slot.at(t.shard)), pool);
  });
  for (const auto& oc : outcomes) {
    if (oc.ok()) continue;
    std::string msg = "shard " + oc.shard + ": " + oc.error + "; no snapshot recorded";
    if (oc.state == fanout::State::refused)
      throw TooManyConnections(msg, pg::refused_hint());
    if (oc.state == fanout::State::unreachable)
      throw unavailable_error(msg, "collect again once it is back, or mark it offline (`shardctl shard set " + oc.shard +
                                       " --status offline`) to collect without it");
    throw Error(oc.kind, msg, oc.hint);
  }
  return results;
}

// The shard's counters per second since the previous snapshot (none for an offline shard or one
// the previous snapshot lacks); returns its tables' rates.
std::map<std::string, Counters> add_deltas(ShardStats& stats, const std::optional<Snapshot>& previous,
                                          const std::unordered_map<std::string, const ShardStats*>& previous_shards) {
  auto found = previous_shards.find(stats.shard);
  const ShardStats* before = found == previous_shards.end() ? nullptr : found->second;
  if (before && stats.status != catalog::ShardStatus::offline && !before->counters.empty()) {
    stats.interval_seconds = previous->age_seconds;
    stats.deltas = rates(stats.counters, before->counters, previous->age_seconds);
  }
  std::map<std::string, Counters> table_deltas;
  if (before)
    for (const auto& [name, c] : stats.table_counters) {
      auto it = before->table_counters.find(name);
      if (it != before->table_counters.end()) table_deltas[name] = rates(c, it->second, previous->age_seconds);
    }
  return table_deltas;
}

// The keys of one mapping on its shard, each with its rows, bytes (physical and live) and load:
// the tables' load spread over their rows, unless a load file gives the map's keys their load.
std::vector<KeyWeight> mapping_keys(const MappingStats& ms, const ShardResult& r, const std::vector<TableJob>& tables,
                                    const std::map<std::string, LoadIndex>& loads,
                                    std::map<std::string, Counters>& table_deltas) {
  std::vector<KeyWeight> keys;
  for (const auto& job : tables) {
    if (job.map->name != ms.map) continue;
    auto kit = r.keys.find(job.def.name);
    if (kit == r.keys.end()) continue;
    const TableSize& size = r.tables.at(job.def.name);
    if (size.rows == 0) continue;
    const double rows = static_cast<double>(size.rows);
    double bytes_per_row = static_cast<double>(size.total) / rows;
    double load_per_row = loads.count(ms.map) ? 0.0 : table_ops(table_deltas[job.def.name]) / rows;
    for (const auto& k : kit->second)
      if (in_mapping(ms, k.key)) {
        const double n = static_cast<double>(k.rows);
        keys.push_back(KeyWeight{k.key, k.rows, k.row_bytes * size.live_per_row_byte, load_per_row * n, bytes_per_row * n});
      }
  }
  if (auto lit = loads.find(ms.map); lit != loads.end())
    for (const auto& [k, w] : lit->second)
      if (in_mapping(ms, k)) keys.push_back(KeyWeight{k, 0, 0, w, 0});
  merge_equal_keys(keys);
  return keys;
}

// A mapping's totals and histogram from its keys.
void sum_mapping(MappingStats& ms, const std::vector<KeyWeight>& keys, int slices) {
  double bytes = 0, live = 0;
  for (const auto& k : keys) {
    ms.rows += k.rows;
    bytes += k.bytes;
    live += k.live_bytes;
    ms.load += k.load;
  }
  ms.bytes = static_cast<std::int64_t>(bytes + 0.5);
  ms.live_bytes = static_cast<std::int64_t>(live + 0.5);
  if (!ms.is_point) ms.slices = equi_depth(keys, ms.range.low, slices);
}

}  // namespace

Snapshot collect(pg::Connection& catalog, const config::Config& config, const CollectOptions& o) {
  catalog::Store store(catalog, catalog::Writes::preview);
  auto maps = maps_to_collect(store, o);
  Snapshot snap;
  snap.map_filter = o.map;
  snap.load_file = o.load_file;
  for (const auto& m : maps) snap.maps.push_back(MapInfo{m.name, m.kind, m.key_type, map_version(catalog, m.name)});
  auto tables = table_jobs(store, snap);
  auto loads = load_file_keys(o, snap);
  add_mappings(store, snap);

  auto previous = latest_snapshot(catalog);
  auto results = measure_shards(store, config, tables, o);
  // Deltas against the previous snapshot, then rows, bytes, load and histogram per mapping;
  // the previous shards and the mappings found by shard, not searched per shard.
  std::unordered_map<std::string, const ShardStats*> previous_shards;
  if (previous)
    for (const auto& p : previous->shards) previous_shards[p.shard] = &p;
  std::unordered_map<std::string, std::vector<MappingStats*>> mappings_of;
  for (auto& ms : snap.mappings) mappings_of[ms.shard].push_back(&ms);
  for (auto& r : results) {
    auto table_deltas = add_deltas(r.stats, previous, previous_shards);
    if (auto it = mappings_of.find(r.stats.shard); it != mappings_of.end())
      for (auto* ms : it->second) sum_mapping(*ms, mapping_keys(*ms, r, tables, loads, table_deltas), o.slices);
    snap.shards.push_back(std::move(r.stats));
  }
  snap.fingerprint = fingerprint(snap);
  if (!o.dry_run) save_snapshot(catalog, snap);
  return snap;
}

}  // namespace shardctl::stats
