// Stats snapshots in the catalog (schema version 6; live bytes since 8): stats_snapshots, stats_shards,
// stats_mappings, stats_keys.
#pragma once

#include <optional>
#include <string>

#include "pg/connection.hpp"
#include "stats/snapshot.hpp"

namespace shardctl::stats {

// Records `s` in one transaction; sets s.id and s.taken_at.
void save_snapshot(pg::Connection& catalog, Snapshot& s);

// The latest snapshot (that covers `map` when given: one collected for every map, or for that
// map), or nullopt when there is none.
std::optional<Snapshot> latest_snapshot(pg::Connection& catalog, const std::optional<std::string>& map = std::nullopt);

// The current version of each map (maps.version, bumped whenever a mapping changes).
std::int64_t map_version(pg::Connection& catalog, const std::string& map);

}  // namespace shardctl::stats
