// `stats collect`: one query per sharded table per shard (the key distribution), one per shard
// for sizes and pg_stat_user_tables, all shards in parallel; the result is recorded in the
// catalog as a new snapshot.
#pragma once

#include <optional>
#include <string>

#include "config/config.hpp"
#include "pg/connection.hpp"
#include "stats/snapshot.hpp"

namespace shardctl::stats {

struct CollectOptions {
  std::optional<std::string> map;        // only this map's mappings (default: every map)
  std::optional<std::string> load_file;  // key,weight CSV: per-key load of `map` (or the only map)
  int parallel = 4;
  int connect_timeout = 5;
  int slices = 32;  // histogram slices per mapping
  bool dry_run = false;  // measure, record nothing
};

// Measures and records a snapshot. A shard that cannot be reached stops the collection with
// an unavailable Error (69) naming it, and nothing is recorded: a snapshot with a shard missing
// would show it as empty, and the planner would fill it. Offline shards (catalog status) are
// not queried; their mappings are recorded with no rows.
Snapshot collect(pg::Connection& catalog, const config::Config& config, const CollectOptions& options);

}  // namespace shardctl::stats
