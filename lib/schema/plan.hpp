// What a shard needs, from its `shardctl.schema_history` rows and the migration directory:
// pending files, files changed after they were applied, recorded failures; and the fleet's
// shard x version matrix for `schema status`. Pure: no database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schema/files.hpp"

namespace shardctl::schema {

// One row of shardctl.schema_history. kind: versioned | repeatable | baseline.
struct HistoryRow {
  std::int64_t id = 0;
  std::optional<std::string> version;  // null for repeatable rows
  std::string name;                    // file name (a baseline without files: "<baseline>")
  std::string kind;
  std::string checksum;                // "sha256:<hex>"; empty for a baseline marker
  std::string applied_at;
  std::int64_t duration_ms = 0;
  std::string applied_by;
  bool success = false;
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
  std::vector<std::string> unknown;        // applied versions the directory does not have
  std::vector<std::string> out_of_order;   // pending versioned files below the shard's version
  std::optional<Version> current;          // highest version applied (or baselined)
  std::optional<Version> baseline;         // highest baseline version
  bool up_to_date() const noexcept { return pending.empty() && changed.empty() && failed.empty(); }
};

// The highest successful versioned or baseline version of `history` (rows with a version
// that does not parse are ignored).
std::optional<Version> current_version(const std::vector<HistoryRow>& history);

// The plan of one shard. A versioned file counts as applied when a successful row of its
// version exists (versioned or baseline kind; its checksum, when recorded, must match or the
// file is `changed`), or when a baseline without files covers its version. A repeatable file
// is pending when no successful row has its name or the last one's checksum differs. A failed
// row stays reported until a later successful row of the same file.
ShardPlan plan_shard(const std::vector<Migration>& migrations, const std::vector<HistoryRow>& history);

// `schema status`: one column per migration (with DIR) or per version any shard has (without).
// Cell values: "ok" applied, "baseline" covered by a baseline, "pending" (not applied),
// "failed", "changed" (applied with another checksum), "" not applicable.
struct StatusColumn {
  std::string label;  // file name (with DIR) or version text (without)
  std::string kind;   // versioned | repeatable
};
struct StatusRow {
  std::string shard;
  std::string state;    // current | pending | failed | changed | different | unreachable
  std::string version;  // highest applied, "" when none
  std::vector<std::string> cells;  // one per column; empty for an unreachable shard
  std::string error;    // unreachable: why
};
struct StatusMatrix {
  std::vector<StatusColumn> columns;
  std::vector<StatusRow> rows;
  std::string head;  // the version every shard should be at ("" when none)
  // SPEC: 0 all current, 1 pending or different, 2 a failed migration recorded, 3 a shard
  // unreachable. When several hold, the most severe: 2, then 3, then 1.
  int exit_code() const;
};

struct ShardHistory {
  std::string shard;
  std::optional<std::vector<HistoryRow>> rows;  // nullopt: unreachable
  std::string error;
};

// Against the directory's migrations.
StatusMatrix status_against_directory(const std::vector<Migration>& migrations, const std::vector<ShardHistory>& shards);
// Without a directory: shards against each other; the head is the highest version any shard
// has, and a shard lacking a version another shard has is `different` (pending).
StatusMatrix status_between_shards(const std::vector<ShardHistory>& shards);

}  // namespace shardctl::schema
