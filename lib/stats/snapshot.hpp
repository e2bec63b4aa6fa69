// A stats snapshot: what `stats collect` measured on every shard at one time (shardctl-stats(1)
// "Rebalance planning"), as stored in the catalog and read back by `stats show` and the
// rebalance planner.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog.hpp"
#include "routing/key.hpp"

namespace shardctl::stats {

// One slice of a mapping's equi-depth key histogram: the keys [low, next slice's low), in the
// map's bound type (the key, or its 64-bit hash for hash maps).
struct Slice {
  routing::Key low;
  std::int64_t rows = 0;
  std::int64_t bytes = 0;  // physical: the tables' size apportioned by rows
  double load = 0;
  bool single_key = false;  // one key heavier than a slice: it cannot be split
  std::optional<std::int64_t> live_bytes;  // what its rows occupy (see MappingStats); none in older snapshots
};

struct MappingStats {
  std::int64_t mapping_id = 0;
  std::string map;
  std::int64_t map_version = 0;
  std::string shard;
  bool is_point = false;
  routing::KeyRange range;  // bound type; a point as its key in range.low
  std::int64_t rows = 0;
  std::int64_t bytes = 0;  // physical: heap + indexes + TOAST, apportioned by rows (dead space included)
  // Live bytes: what the mapping's rows occupy. Per row the stored size of each value
  // (pg_column_size: TOASTed values as stored, never fetched) plus the tuple header and line
  // pointer, summed in the same scan that counts the keys; the table's indexes added in
  // proportion (its total size over its heap and TOAST size); at most the physical share.
  // Rows deleted but not yet vacuumed, or vacuumed but not returned to the OS, count in `bytes`
  // only. None in snapshots taken before shardctl measured it (catalog schema 7 and older).
  std::optional<std::int64_t> live_bytes;
  double load = 0;
  std::vector<Slice> slices;
};

// pg_stat_user_tables counters summed over a shard's tables, and their per-second rates.
using Counters = std::map<std::string, double>;

struct ShardStats {
  std::string shard;
  catalog::ShardStatus status = catalog::ShardStatus::online;  // the catalog's when collected
  std::optional<std::string> error;
  std::int64_t db_bytes = 0;     // pg_database_size
  // pg_database_size less the dead space of the sharded tables (their physical size minus
  // their live bytes, as MappingStats measures them): the size the shard's data would take
  // with no dead space. None in older snapshots.
  std::optional<std::int64_t> live_bytes;
  Counters counters;             // totals since the server's stats were reset
  Counters deltas;               // per second since the previous snapshot (empty: none before)
  std::optional<double> interval_seconds;
  std::optional<std::int64_t> capacity_bytes;  // [shards.NAME] capacity_bytes
  double weight = 1.0;                         // [shards.NAME] weight
  // Per sharded table (display name): the same counters, kept to compute the next deltas.
  std::map<std::string, Counters> table_counters;
};

struct MapInfo {
  std::string name;
  routing::MapKind kind = routing::MapKind::range;
  routing::KeyType key_type = routing::KeyType::int8;
  std::int64_t version = 0;
};

struct Snapshot {
  std::int64_t id = 0;
  std::string taken_at;  // ISO 8601, as the catalog prints it
  std::optional<std::string> map_filter;
  std::optional<std::string> load_file;
  std::string fingerprint;  // SHA-256 of what was measured
  std::vector<MapInfo> maps;
  std::vector<ShardStats> shards;
  std::vector<MappingStats> mappings;
  std::map<std::string, std::vector<std::pair<std::string, double>>> key_loads;  // map -> key, load
  double age_seconds = 0;  // how old it was when read

  const MapInfo* map(const std::string& name) const;
};

routing::KeyType bound_type(const MapInfo& map);

nlohmann::json to_json(const Snapshot& s);
// One mapping's measurement with its histogram (what to_json and the stats_mappings rows hold).
nlohmann::json to_json(const MappingStats& m);
nlohmann::json to_json(const MapInfo& m);
// The fingerprint: SHA-256 over the measured values (not the id or the time it was stored).
std::string fingerprint(const Snapshot& s);

}  // namespace shardctl::stats
