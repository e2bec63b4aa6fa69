// What a shard needs, from its `shardctl.schema_history` rows and the migration directory:
// pending files, files changed after they were applied, recorded failures; and the fleet's
// shard x version matrix for `schema status`. Pure: no database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schema/files.hpp"
#include "schema/states.hpp"
#include "shardside/schema_history_row.hpp"

namespace shardctl::schema {

// One row of shardctl.schema_history. kind: versioned | repeatable | baseline.
using HistoryRow = shardside::SchemaHistoryRow;

// An index in the state a failed CREATE INDEX CONCURRENTLY leaves (pg_index.indisvalid = false).
struct InvalidIndex {
  std::string index;     // schema-qualified, quoted
  std::string table;
  std::string drop_sql;  // DROP INDEX CONCURRENTLY IF EXISTS ...;
  std::string file{};    // the migration file that creates an index of that name ("" when unknown)
};

// A file that started on a shard and never finished (an unfinished row and nothing after it).
struct Started {
  std::string file;
  std::string at;  // when it started (applied_at of its row)
  std::string by;
};

struct Changed {
  std::string file;
  std::string recorded;  // checksum in the history
  std::string actual;    // checksum of the file now
};

struct ShardPlan {
  std::vector<std::size_t> pending;        // indexes into the migrations, in the order to apply
  std::vector<Changed> changed;            // applied versioned files whose checksum differs
  std::vector<std::string> failed;         // files whose last recorded attempt failed
  std::vector<Started> started;            // files started and never finished: not run again
  std::vector<std::string> unknown;        // applied versions the directory does not have
  std::vector<std::string> out_of_order;   // pending versioned files below the shard's version
  std::optional<Version> current;          // highest version applied (or baselined)
  std::optional<Version> baseline;         // highest baseline version
  bool up_to_date() const noexcept { return pending.empty() && changed.empty() && failed.empty() && started.empty(); }
};

// The highest successful versioned or baseline version of `history` (rows with a version
// that does not parse are ignored).
std::optional<Version> current_version(const std::vector<HistoryRow>& history);

// The plan of one shard. A versioned file counts as applied when a successful row of its
// version exists (versioned or baseline kind; its checksum, when recorded, must match or the
// file is `changed`), or when a baseline without files covers its version. A repeatable file
// is pending when no successful row has its name or the last one's checksum differs. A failed
// row stays reported until a later successful row of the same file (or a later unfinished one,
// which is then what is reported). A file whose last row is unfinished is `started` and not
// pending: nobody knows what it did, so it is never simply run again.
ShardPlan plan_shard(const std::vector<Migration>& migrations, const std::vector<HistoryRow>& history);

// What a shard's history says about one file: applied (a successful row, a baseline row, or
// covered by a baseline marker), failed, started (unfinished) or not_run, from its last row;
// `last` is set to that row (nullptr when none or only a marker covers it).
RecordedState file_state(const std::vector<HistoryRow>& history, const Migration& m, const HistoryRow** last = nullptr);

// `schema status`: one column per migration (with DIR) or per version any shard has (without).
// Cells: ok applied, baseline covered by a baseline, pending (not applied), failed, changed
// (applied with another checksum), started (started, never finished), invalid (applied, but an
// index it creates is INVALID), differs (without DIR: a repeatable file's last checksum is not
// the same everywhere), none not applicable.
struct StatusColumn {
  std::string label;  // file name (with DIR) or version text (without)
  Kind kind = Kind::versioned;
};
struct StatusRow {
  std::string shard;
  // running: a file started and the shard's rollout lock is held (a rollout is at work);
  // interrupted: a file started, never finished, and nobody holds the lock.
  StatusState state = StatusState::current;
  std::string version;  // highest applied, "" when none
  std::vector<Cell> cells;  // one per column; empty for an unreachable shard
  std::string error;    // unreachable: why
  std::vector<Started> started{};
  std::vector<InvalidIndex> invalid_indexes{};
};
struct StatusMatrix {
  std::vector<StatusColumn> columns;
  std::vector<StatusRow> rows;
  std::string head;  // the version every shard should be at ("" when none)
  // 0 all current, 1 pending, running or different, 2 a failed migration recorded, a file
  // interrupted or an INVALID index of a file, 3 a shard unreachable. When several hold, the
  // most severe: 2, then 3, then 1 (shardctl-schema(1), EXIT STATUS).
  int exit_code() const;
};

struct ShardHistory {
  std::string shard;
  std::optional<std::vector<HistoryRow>> rows;  // nullopt: unreachable, or reached and unreadable
  std::string error;
  bool lock_held = false;                     // the shard's rollout lock was held when it was read
  std::vector<InvalidIndex> invalid_indexes{};  // INVALID indexes the directory's files create
  bool reached = false;                       // connected: without rows, its history could not be read
  bool refused = false;                       // not reached: the server was out of connection slots
};

// Against the directory's migrations.
StatusMatrix status_against_directory(const std::vector<Migration>& migrations, const std::vector<ShardHistory>& shards);
// Without a directory: shards against each other; the head is the highest version any shard
// has, and a shard lacking a version another shard has is `different` (pending).
StatusMatrix status_between_shards(const std::vector<ShardHistory>& shards);

}  // namespace shardctl::schema
