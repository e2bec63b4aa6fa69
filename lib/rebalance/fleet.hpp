// The planner's input, built from the latest stats snapshot and the catalog as it is now:
// shard status from the catalog, capacity and weight from the config, rows/bytes/load and
// histograms from the snapshot, and `held` on every mapping a live operation covers.
#pragma once

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

// Usage Error (64) when the snapshot does not describe `map` (or a map) as it is now: its
// version changed since the collect (hint: run shardctl stats collect).
FleetInput build_fleet(pg::Connection& catalog, const config::Config& config, const stats::Snapshot& snapshot,
                       const std::optional<std::string>& map);

}  // namespace shardctl::rebalance
