// The words of the schema states (states.hpp): what JSON, JUnit and text output show, one
// core/words.hpp table per state.
#include "schema/states.hpp"

#include "core/words.hpp"

namespace shardctl::schema {

shardside::SchemaHistoryKind history_kind(Kind kind) noexcept {
  return kind == Kind::repeatable ? shardside::SchemaHistoryKind::repeatable : shardside::SchemaHistoryKind::versioned;
}

namespace {

// One table per state; a to_text keeps the word it has always printed for a value out of range.
constexpr auto recorded_state_words =
    words<RecordedState>({{RecordedState::applied, "applied"}, {RecordedState::failed, "failed"},
                          {RecordedState::started, "started"}, {RecordedState::not_run, "not_run"}});
constexpr auto file_run_state_words =
    words<FileRunState>({{FileRunState::applied, "applied"}, {FileRunState::failed, "failed"},
                         {FileRunState::locked, "locked"}, {FileRunState::unreachable, "unreachable"}});
constexpr auto shard_state_words =
    words<ShardState>({{ShardState::ok, "ok"}, {ShardState::failed, "failed"}, {ShardState::locked, "locked"},
                       {ShardState::unreachable, "unreachable"}, {ShardState::refused, "refused"},
                       {ShardState::skipped, "skipped"}});
constexpr auto repair_state_words =
    words<RepairState>({{RepairState::ok, "ok"}, {RepairState::refused, "refused"}, {RepairState::locked, "locked"},
                        {RepairState::unreachable, "unreachable"}, {RepairState::skipped, "skipped"}});
constexpr auto repair_mark_words = words<RepairMark>({{RepairMark::applied, "applied"}, {RepairMark::failed, "failed"}});
constexpr auto planned_state_words =
    words<PlannedState>({{PlannedState::up_to_date, "up_to_date"}, {PlannedState::pending, "pending"},
                         {PlannedState::unreachable, "unreachable"}, {PlannedState::refused, "refused"},
                         {PlannedState::interrupted, "interrupted"},
                         {PlannedState::running, "running"}, {PlannedState::invalid_index, "invalid_index"}});
constexpr auto status_state_words = words<StatusState>(
    {{StatusState::current, "current"}, {StatusState::pending, "pending"}, {StatusState::running, "running"},
     {StatusState::failed, "failed"}, {StatusState::interrupted, "interrupted"}, {StatusState::invalid_index, "invalid_index"},
     {StatusState::changed, "changed"}, {StatusState::different, "different"}, {StatusState::unreachable, "unreachable"},
     {StatusState::refused, "refused"}});
constexpr auto cell_state_words = words<CellState>(
    {{CellState::none, ""}, {CellState::ok, "ok"}, {CellState::baseline, "baseline"}, {CellState::pending, "pending"},
     {CellState::failed, "failed"}, {CellState::changed, "changed"}, {CellState::started, "started"},
     {CellState::invalid, "invalid"}, {CellState::differs, "differs"}});

}  // namespace

std::string_view to_text(RecordedState state) noexcept { return recorded_state_words.text_or(state, "not_run"); }
std::string_view to_text(FileRunState state) noexcept { return file_run_state_words.text_or(state, "failed"); }
std::string_view to_text(ShardState state) noexcept { return shard_state_words.text_or(state, "skipped"); }
std::string_view to_text(RepairState state) noexcept { return repair_state_words.text_or(state, "skipped"); }
std::string_view to_text(RepairMark mark) noexcept { return repair_mark_words.text_or(mark, "failed"); }
std::string_view to_text(PlannedState state) noexcept { return planned_state_words.text_or(state, "pending"); }
std::string_view to_text(StatusState state) noexcept { return status_state_words.text_or(state, "pending"); }
std::string_view to_text(CellState state) noexcept { return cell_state_words.text(state); }

std::string to_text(const Cell& cell) {
  return cell.state == CellState::differs ? cell.checksum : std::string(to_text(cell.state));
}

std::ostream& operator<<(std::ostream& out, RecordedState state) { return out << to_text(state); }
std::ostream& operator<<(std::ostream& out, FileRunState state) { return out << to_text(state); }
std::ostream& operator<<(std::ostream& out, ShardState state) { return out << to_text(state); }
std::ostream& operator<<(std::ostream& out, RepairState state) { return out << to_text(state); }
std::ostream& operator<<(std::ostream& out, RepairMark mark) { return out << to_text(mark); }
std::ostream& operator<<(std::ostream& out, PlannedState state) { return out << to_text(state); }
std::ostream& operator<<(std::ostream& out, StatusState state) { return out << to_text(state); }
std::ostream& operator<<(std::ostream& out, CellState state) { return out << to_text(state); }
std::ostream& operator<<(std::ostream& out, const Cell& cell) { return out << to_text(cell); }

}  // namespace shardctl::schema
