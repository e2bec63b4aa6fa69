// The fleet-level commands on the fan-out executor: survey every shard's history, then apply
// in waves (canary first), baseline, or build the status matrix.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fanout/fanout.hpp"
#include "schema/files.hpp"
#include "schema/plan.hpp"
#include "schema/runner.hpp"
#include "shardio/server_pool.hpp"

namespace shardctl::schema {

// Every target's history, read without the lock and without creating anything (an
// unreachable shard has no rows and its error), whether its rollout lock is held, and (with
// `files`) the INVALID indexes found where those files create theirs. Connections come from
// `pool` (the run's: a shard's connection may serve its apply afterwards).
std::vector<ShardHistory> survey(shardio::ServerPool& pool, const std::vector<fanout::Target>& targets, int parallel,
                                 int connect_timeout, const std::vector<Migration>* files = nullptr);

// Apply exit codes (documented in shardctl-schema(1)).
namespace apply_exit {
inline constexpr int ok = 0;
inline constexpr int migration_failed = 2;  // same meaning as `status` exit 2
}  // namespace apply_exit

struct ApplyOptions {
  int parallel = 4;
  int canary = 0;
  bool continue_on_error = false;
  bool dry_run = false;
  RunSettings settings;
  std::function<void(const ShardReport&)> on_shard;  // progress, one call per finished shard
};

struct PlannedShard {
  std::string shard;
  // interrupted: a file started and never finished (apply stops there); running: a file
  // started and the rollout lock is held; invalid_index: an index a file creates is INVALID
  // (apply fails there)
  PlannedState state = PlannedState::pending;
  std::string version;  // current
  std::vector<std::string> pending;
  std::vector<std::string> out_of_order;
  std::vector<std::string> unknown;
  std::vector<std::string> failed;  // recorded failures (they are retried)
  std::string error;
  std::vector<Started> started{};
  std::vector<InvalidIndex> invalid_indexes{};
};

struct ApplyResult {
  bool dry_run = false;
  std::string head;  // the directory's highest version
  std::vector<PlannedShard> plan;    // per shard, from the survey (dry run: the whole answer)
  std::vector<ShardReport> shards;   // per shard, in target order (not in a dry run)
  int canary = 0;
  bool canary_failed = false;
  // 0 every shard ok; 2 a migration failed somewhere; else 75 a shard's lock was held; else
  // 69 a shard unreachable. (An edited applied file throws a data Error (65) before anything.)
  int exit_code = 0;
};

// Refuses (data Error 65, nothing run anywhere) when an applied file's checksum changed on any
// reachable shard, naming each such file and its shards. Unreachable shards are reported and
// left for the next run; they never stop the others. With canary K > 0 the first K reachable
// shards run first and any shard there that is not ok stops the rollout; then the rest, and at
// the first failed or locked shard no new shard starts unless continue_on_error.
ApplyResult apply(const std::vector<fanout::Target>& targets, const std::vector<Migration>& migrations,
                  const ApplyOptions& options);

struct BaselineResult {
  std::string version;
  std::vector<std::string> files;
  std::vector<ShardReport> shards;
  int exit_code = 0;  // 0, or 75 a lock held, 69 a shard unreachable
};
// Refuses (data Error 65, nothing changed) when a reachable shard already has a history other
// than this very baseline. `files`: the versioned files up to `version` to record with their
// checksums (empty: only the version).
BaselineResult baseline(const std::vector<fanout::Target>& targets, const Version& version,
                        const std::vector<Migration>& files, int parallel, bool dry_run, const RunSettings& settings);

// `schema repair`: records on every selected shard that `file` is applied or failed (see
// repair_refusal). Refuses (data Error 65, nothing changed anywhere) when a reachable shard
// refuses it. Shards that already say so are left alone.
struct RepairResult {
  std::string file;
  RepairMark mark = RepairMark::applied;
  bool dry_run = false;
  std::vector<RepairShard> shards;
  int exit_code = 0;  // 0, or 75 a lock held, 69 a shard unreachable, 65 refused under the lock
};
RepairResult repair(const std::vector<fanout::Target>& targets, const Migration& file, RepairMark mark, int parallel,
                    bool dry_run, const RunSettings& settings);

// `schema status`: against the directory's migrations, or (nullopt) between the shards.
StatusMatrix status(const std::vector<fanout::Target>& targets, const std::optional<std::vector<Migration>>& migrations,
                    int parallel, int connect_timeout);

}  // namespace shardctl::schema
