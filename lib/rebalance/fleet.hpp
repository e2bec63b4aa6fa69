// The planner's input, built from the latest stats snapshot and the catalog as it is now:
// shard status from the catalog, capacity and weight from the config, rows, live bytes, load and
// histograms from the snapshot, and `held` on every mapping a live operation covers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "pg/connection.hpp"
#include "planner/planner.hpp"
#include "stats/snapshot.hpp"

namespace shardctl::rebalance {

struct FleetInput {
  planner::Fleet fleet;
  std::vector<std::string> notes;  // mappings held by operations, shards without stats
};

// The sizes the planner balances, from a snapshot alone (pure). Each mapping and histogram
// slice weighs its live bytes: what its rows occupy, not the dead space deleted rows leave
// behind (a purge, an archive) until it is reused. A snapshot taken before shardctl measured
// live bytes has none: then every mapping weighs its physical bytes, as planning did before,
// and `live` is false. A measured shard's fixed bytes are its live size (its database less the
// dead space of its sharded tables) less its mappings' live bytes: reference tables, system
// catalogs, rows of keys it does not map. The dead space of its sharded tables counts nowhere,
// also on a shard that gave every mapping away. (Physical: its database less its mappings.)
struct MeasuredSizes {
  bool live = true;
  std::map<std::string, std::int64_t> fixed_bytes;  // shards in the snapshot
  std::vector<planner::Mapping> mappings;           // in the snapshot's order, none held yet
  std::vector<std::string> notes;                   // physical sizes used; shards mostly dead space
};
MeasuredSizes measured_sizes(const stats::Snapshot& snapshot);

// Usage Error (64) when the snapshot does not describe `map` (or a map) as it is now: its
// version changed since the collect (hint: run shardctl stats collect).
FleetInput build_fleet(pg::Connection& catalog, const config::Config& config, const stats::Snapshot& snapshot,
                       const std::optional<std::string>& map);

}  // namespace shardctl::rebalance
