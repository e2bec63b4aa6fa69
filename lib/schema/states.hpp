// The states `shardctl schema` works with and reports, as enums: code compares these, never
// words. Their words (JSON, JUnit and text output, the notes of repair rows) are only in
// states.cpp; the words of shardctl.schema_history's own columns are lib/shardside's
// (shardside/schema_history_row.hpp).
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "core/words.hpp"
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

// Each state's words (JSON, JUnit and text output), one core/words.hpp table per state; a state
// out of range prints the word it always has (the table's otherwise()). CellState::none is "".
inline constexpr auto recorded_state_words =
    words<RecordedState>({{RecordedState::applied, "applied"}, {RecordedState::failed, "failed"},
                          {RecordedState::started, "started"}, {RecordedState::not_run, "not_run"}}).otherwise("not_run");
inline constexpr auto file_run_state_words =
    words<FileRunState>({{FileRunState::applied, "applied"}, {FileRunState::failed, "failed"},
                         {FileRunState::locked, "locked"}, {FileRunState::unreachable, "unreachable"}}).otherwise("failed");
inline constexpr auto shard_state_words =
    words<ShardState>({{ShardState::ok, "ok"}, {ShardState::failed, "failed"}, {ShardState::locked, "locked"},
                       {ShardState::unreachable, "unreachable"}, {ShardState::refused, "refused"},
                       {ShardState::skipped, "skipped"}}).otherwise("skipped");
inline constexpr auto repair_state_words =
    words<RepairState>({{RepairState::ok, "ok"}, {RepairState::refused, "refused"}, {RepairState::locked, "locked"},
                        {RepairState::unreachable, "unreachable"}, {RepairState::skipped, "skipped"}}).otherwise("skipped");
inline constexpr auto repair_mark_words = words<RepairMark>({{RepairMark::applied, "applied"}, {RepairMark::failed, "failed"}}).otherwise("failed");
inline constexpr auto planned_state_words =
    words<PlannedState>({{PlannedState::up_to_date, "up_to_date"}, {PlannedState::pending, "pending"},
                         {PlannedState::unreachable, "unreachable"}, {PlannedState::refused, "refused"},
                         {PlannedState::interrupted, "interrupted"},
                         {PlannedState::running, "running"}, {PlannedState::invalid_index, "invalid_index"}}).otherwise("pending");
inline constexpr auto status_state_words = words<StatusState>(
    {{StatusState::current, "current"}, {StatusState::pending, "pending"}, {StatusState::running, "running"},
     {StatusState::failed, "failed"}, {StatusState::interrupted, "interrupted"}, {StatusState::invalid_index, "invalid_index"},
     {StatusState::changed, "changed"}, {StatusState::different, "different"}, {StatusState::unreachable, "unreachable"},
     {StatusState::refused, "refused"}}).otherwise("pending");
inline constexpr auto cell_state_words = words<CellState>(
    {{CellState::none, ""}, {CellState::ok, "ok"}, {CellState::baseline, "baseline"}, {CellState::pending, "pending"},
     {CellState::failed, "failed"}, {CellState::changed, "changed"}, {CellState::started, "started"},
     {CellState::invalid, "invalid"}, {CellState::differs, "differs"}});
constexpr const auto& words_of(RecordedState) noexcept { return recorded_state_words; }
constexpr const auto& words_of(FileRunState) noexcept { return file_run_state_words; }
constexpr const auto& words_of(ShardState) noexcept { return shard_state_words; }
constexpr const auto& words_of(RepairState) noexcept { return repair_state_words; }
constexpr const auto& words_of(RepairMark) noexcept { return repair_mark_words; }
constexpr const auto& words_of(PlannedState) noexcept { return planned_state_words; }
constexpr const auto& words_of(StatusState) noexcept { return status_state_words; }
constexpr const auto& words_of(CellState) noexcept { return cell_state_words; }
using shardctl::operator<<;
using shardctl::to_text;

// A cell's word: its state's, or for differs the checksum it shows.
std::string to_text(const Cell& cell);

std::ostream& operator<<(std::ostream& out, const Cell& cell);

}  // namespace shardctl::schema
