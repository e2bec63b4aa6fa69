// The states `shardctl schema` works with and reports, as enums: code compares these, never
// words. Their words (JSON, JUnit and text output, the notes of repair rows) are only in
// states.cpp; the words of shardctl.schema_history's own columns are lib/shardside's
// (shardside/schema_history_row.hpp).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "schema/files.hpp"
#include "shardside/schema_history_row.hpp"

namespace shardctl::schema {

// The history kind an attempt of a file of this kind is recorded with.
shardside::SchemaHistoryKind history_kind(Kind kind) noexcept;

// What a shard's history says about one file (file_state; `repair`'s "was"): a successful row
// or a baseline covers it, its last attempt failed, it started and never finished, or it never
// ran there.
enum class RecordedState { applied, failed, started, not_run };

// One file's outcome in an apply (FileResult::state): applied, failed (recorded in the history),
// its lock wait timed out (nothing of it kept), or the connection was lost while it ran.
enum class FileRunState { applied, failed, locked, unreachable };

// A shard after apply or baseline (ShardReport::state; see runner.hpp). refused: the server
// turned every connection away for want of slots until the connect timeout (TooManyConnections);
// like unreachable, nothing ran there.
enum class ShardState { ok, failed, locked, unreachable, refused, skipped };

// A shard after repair (RepairShard::state): done (or nothing to do), refused under the lock,
// the lock held, no connection (a server out of connection slots too: "refused" is a repair's
// refusal here), or not started.
enum class RepairState { ok, refused, locked, unreachable, skipped };

// `schema repair`: what to record about a file on a shard.
enum class RepairMark { applied, failed };

// A shard in apply's plan (PlannedShard::state; see rollout.hpp).
enum class PlannedState { up_to_date, pending, unreachable, refused, interrupted, running, invalid_index };

// A shard in `schema status` (StatusRow::state; see plan.hpp).
enum class StatusState { current, pending, running, failed, interrupted, invalid_index, changed, different, unreachable, refused };

// One cell of the status matrix (see plan.hpp): none is "" (not applicable); differs is a
// repeatable file whose last checksum is not the same on every shard, shown as this shard's.
enum class CellState { none, ok, baseline, pending, failed, changed, started, invalid, differs };
struct Cell {
  CellState state = CellState::none;
  std::string checksum{};  // differs: this shard's checksum, shortened ("sha256:" + 12 hex digits)
  bool operator==(const Cell&) const = default;
};

std::string_view to_text(RecordedState state) noexcept;
std::string_view to_text(FileRunState state) noexcept;
std::string_view to_text(ShardState state) noexcept;
std::string_view to_text(RepairState state) noexcept;
std::string_view to_text(RepairMark mark) noexcept;  // "applied" | "failed"
std::string_view to_text(PlannedState state) noexcept;
std::string_view to_text(StatusState state) noexcept;
std::string_view to_text(CellState state) noexcept;  // none: ""
// A cell's word: its state's, or for differs the checksum it shows.
std::string to_text(const Cell& cell);

std::ostream& operator<<(std::ostream& out, RecordedState state);
std::ostream& operator<<(std::ostream& out, FileRunState state);
std::ostream& operator<<(std::ostream& out, ShardState state);
std::ostream& operator<<(std::ostream& out, RepairState state);
std::ostream& operator<<(std::ostream& out, RepairMark mark);
std::ostream& operator<<(std::ostream& out, PlannedState state);
std::ostream& operator<<(std::ostream& out, StatusState state);
std::ostream& operator<<(std::ostream& out, CellState state);
std::ostream& operator<<(std::ostream& out, const Cell& cell);

}  // namespace shardctl::schema
