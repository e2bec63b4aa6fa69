// One shard's rollout: connect, take the rollout lock outside any transaction, create the
// history table, re-plan from the history under the lock, then run each pending file (in its
// own transaction with its history row, or statement by statement for a no-transaction file).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "fanout/fanout.hpp"
#include "schema/files.hpp"
#include "schema/plan.hpp"
#include "shardio/server_pool.hpp"

namespace shardctl::schema {

struct RunSettings {
  std::chrono::milliseconds lock_timeout{10'000};  // rollout lock wait and SET lock_timeout
  std::chrono::milliseconds statement_timeout{0};  // SET statement_timeout; 0 = none
  int connect_timeout = 5;                         // seconds
  std::string directory = "DIR";                   // the migration directory as given, for hints
};

// One file's outcome on a shard.
struct FileResult {
  std::string file;
  std::string version;  // "" for repeatable
  Kind kind = Kind::versioned;
  FileRunState state = FileRunState::applied;
  std::int64_t duration_ms = 0;
  std::string error;    // "FILE:LINE:COL: message" when the server said where
};

// State of a shard after a run:
//   ok          every planned file applied (or nothing was pending)
//   failed      a migration failed (recorded in its history), the shard refused the plan, a
//               file started there and never finished (nothing runs until `schema repair`),
//               or an index a file creates is INVALID
//   locked      the rollout lock stayed taken for --lock-timeout, or a migration's lock wait
//               timed out (nothing of that file is kept)
//   unreachable no connection (before or during the run)
//   skipped     not started: an earlier failure stopped the rollout
struct ShardReport {
  std::string shard;
  ShardState state = ShardState::skipped;
  std::string version_before;
  std::string version_after;
  std::vector<std::string> planned;  // files the plan had for this shard
  std::vector<FileResult> files;     // files attempted, in order
  std::int64_t duration_ms = 0;
  std::string error;
  std::string hint;
  std::vector<InvalidIndex> invalid_indexes;
  bool ok() const noexcept { return state == ShardState::ok; }
};

// The DSN a rollout connects with: the catalog's, a connect_timeout and an application_name
// that names it in pg_stat_activity (so a lock holder is recognizable).
std::string rollout_dsn(const fanout::Target& target, int connect_timeout);

// Applies what the plan of this shard holds. Never throws for the shard's own failures: they
// are in the report.
// Its connection comes from `pool` (the run's), and goes back there only when the shard ended
// as it began: no transaction, no lock held, settings reset. `check_applied`: look again, after
// the run, for INVALID indexes of the files applied before it (the survey saw some there; where
// it saw none, the files this run applied were looked at one by one, those that can leave one).
ShardReport apply_shard(shardio::ServerPool& pool, const fanout::Target& target, const std::vector<Migration>& migrations,
                        const RunSettings& settings, bool check_applied = true);

// Records `version` (and, when `files` is not empty, each of those files with its checksum) as
// applied without running anything. A shard whose history already holds anything but the very
// same baseline is refused (state failed). Never throws for the shard's own failures.
ShardReport baseline_shard(shardio::ServerPool& pool, const fanout::Target& target, const Version& version,
                           const std::vector<Migration>& files, const RunSettings& settings);

// One shard's answer to a repair (what to record: RepairMark, states.hpp).
struct RepairShard {
  std::string shard;
  RepairState state = RepairState::skipped;
  std::optional<RecordedState> was;  // the file's state there before (unknown: unreachable)
  bool recorded = false;             // a repair row was written (or, in a dry run, would be)
  std::string error;
  std::string hint;
};

// Why `repair` refuses to mark `file` on a shard with this history and these INVALID indexes of
// the file, or "" when it may (`*needed` false: the history already says so). Refused: marking
// applied a file that never ran, whose INVALID index is there, or that changed since it ran;
// marking failed a file recorded as applied or that never ran.
std::string repair_refusal(const std::vector<HistoryRow>& history, const Migration& file, RepairMark mark,
                           const std::vector<InvalidIndex>& invalid, bool* needed);

// Takes the rollout lock, checks again under it (repair_refusal), and writes one history row for
// `file` with success = (mark == applied) and a note saying it was repaired.
RepairShard repair_shard(shardio::ServerPool& pool, const fanout::Target& target, const Migration& file, RepairMark mark,
                         const RunSettings& settings);

// Why `baseline` refuses a shard with this history, or "" when it may go ahead (or nothing
// needs doing: `*already` is set when the same baseline is recorded).
std::string baseline_refusal(const std::vector<HistoryRow>& history, const Version& version,
                             const std::vector<Migration>& files, bool* already);

}  // namespace shardctl::schema
