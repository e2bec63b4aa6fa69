// The shardctl.toml configuration (shardctl.toml(5)): where it is found, what it may hold.
// Every key the file may contain is declared once in config_schema.cpp; an unknown key,
// a wrong type or a syntax error is a data Error citing file:line:col.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace shardctl::config {

struct ArchiveJob {
  std::string name;
  std::string table;
  std::string where;
  bool cascade = false;
  std::string to;  // "dir:/path" or "postgres:DSN"
  std::optional<std::int64_t> batch_size;               // root rows per batch (default [defaults] batch_size)
  std::optional<std::chrono::milliseconds> max_runtime;  // stop cleanly after the batch that passes it
  std::optional<std::chrono::milliseconds> sleep;        // pause between batches
  std::optional<std::chrono::milliseconds> max_lag;      // pause while a replica replays further behind
};

// The finding kinds of `shardctl check`, by the names a [check] table uses. lib/check owns
// their meaning; they are listed here so that a misspelt kind fails like any unknown key.
inline constexpr std::string_view check_finding_kinds[] = {
    "orphans",        "strays",          "overlapping_mappings", "unmapped_keys",
    "mapping_unknown_shard", "mapping_offline_shard", "mapping_readonly_shard",
    "offline_mapping", "leftover_guard", "expired_lease", "missing_table",
    "leftover_slot",  "leftover_replication", "reference_differs", "reference_tie", "reference_drift",
};

// [check]: how `shardctl check` grades what it finds.
struct CheckConfig {
  std::vector<std::string> warning;   // kinds graded warning whatever their default
  std::vector<std::string> critical;  // kinds graded critical whatever their default
  std::vector<std::string> ignore;    // kinds not reported at all
  // A warning-graded orphans/strays finding with at least this many rows becomes critical.
  std::optional<std::int64_t> orphans_critical_at;
  std::optional<std::int64_t> strays_critical_at;
  std::int64_t sample = 10;  // example keys kept per finding (default of --sample)
};

// [shards.NAME]: what the rebalance planner assumes about one shard.
struct ShardConfig {
  std::string name;
  std::optional<std::int64_t> capacity_bytes;  // none: not configured
  double weight = 1.0;                         // the shard's share relative to the others
};

// [query]: how `shardctl query` connects to the shards.
struct QueryConfig {
  // The login role it connects as instead of the user in each shard's DSN: a role that can
  // only read (see shardctl-query(1)). None: the DSN's own user.
  std::optional<std::string> user;
};

struct Config {
  std::optional<std::filesystem::path> path;  // the file read; empty when none was found
  std::optional<std::string> catalog;         // catalog DSN
  std::int64_t batch_size = 1000;             // [defaults] batch_size
  std::int64_t parallel = 4;                  // [defaults] parallel
  // [defaults] max_connections_per_server: the most connections a command holds at once to the
  // shard databases of one server; --parallel (and parallel) above it is lowered to it. None:
  // --parallel alone bounds them.
  std::optional<std::int64_t> max_connections_per_server;
  // [defaults] fence_grace ("30m", "12h", "7d") as a PostgreSQL interval: how long the source
  // of a move keeps refusing writes to the keys it gave away. None: until `op unfence`.
  std::optional<std::string> fence_grace;
  std::vector<ArchiveJob> archive_jobs;       // [[archive.job]]
  CheckConfig check;                          // [check]
  std::vector<ShardConfig> shards;            // [shards.NAME]
  QueryConfig query;                          // [query]
  const ShardConfig* shard(const std::string& name) const;  // nullptr when not configured
};

// Where the config comes from, in the order shardctl(1) gives (FILES): the explicit --config FILE, then
// $SHARDCTL_CONFIG, then ./shardctl.toml, then $XDG_CONFIG_HOME/shardctl/config.toml
// (~/.config when XDG_CONFIG_HOME is unset). Returns nullopt when no file exists and none
// was named explicitly. An explicitly named file (flag or env) that does not exist is a
// usage Error.
std::optional<std::filesystem::path> locate_config(const std::optional<std::string>& explicit_path);

// Parses config text; `origin` names the file in error messages ("path:line:col: ...").
Config parse_config(std::string_view text, const std::string& origin);

// "12h" -> "12 hours" (units s, m, h, d); nullopt when the text is not such a duration.
std::optional<std::string> grace_interval(const std::string& text);

// "500ms", "30s", "10m", "2h", "7d" -> milliseconds; nullopt when the text is not such a duration.
std::optional<std::chrono::milliseconds> parse_duration(const std::string& text);

// Reads and parses the located file, or returns defaults when there is none.
Config load_config(const std::optional<std::string>& explicit_path);

}  // namespace shardctl::config
