// The words of the schema states (states.hpp): what JSON, JUnit and text output show.
#include "schema/states.hpp"

namespace shardctl::schema {

shardside::SchemaHistoryKind history_kind(Kind kind) noexcept {
  return kind == Kind::repeatable ? shardside::SchemaHistoryKind::repeatable : shardside::SchemaHistoryKind::versioned;
}

std::string_view to_text(RecordedState state) noexcept {
  switch (state) {
    case RecordedState::applied: return "applied";
    case RecordedState::failed: return "failed";
    case RecordedState::started: return "started";
    case RecordedState::not_run: return "not_run";
  }
  return "not_run";
}

std::string_view to_text(FileRunState state) noexcept {
  switch (state) {
    case FileRunState::applied: return "applied";
    case FileRunState::failed: return "failed";
    case FileRunState::locked: return "locked";
    case FileRunState::unreachable: return "unreachable";
  }
  return "failed";
}

std::string_view to_text(ShardState state) noexcept {
  switch (state) {
    case ShardState::ok: return "ok";
    case ShardState::failed: return "failed";
    case ShardState::locked: return "locked";
    case ShardState::unreachable: return "unreachable";
    case ShardState::skipped: return "skipped";
  }
  return "skipped";
}

std::string_view to_text(RepairState state) noexcept {
  switch (state) {
    case RepairState::ok: return "ok";
    case RepairState::refused: return "refused";
    case RepairState::locked: return "locked";
    case RepairState::unreachable: return "unreachable";
    case RepairState::skipped: return "skipped";
  }
  return "skipped";
}

std::string_view to_text(RepairMark mark) noexcept { return mark == RepairMark::applied ? "applied" : "failed"; }

std::string_view to_text(PlannedState state) noexcept {
  switch (state) {
    case PlannedState::up_to_date: return "up_to_date";
    case PlannedState::pending: return "pending";
    case PlannedState::unreachable: return "unreachable";
    case PlannedState::interrupted: return "interrupted";
    case PlannedState::running: return "running";
    case PlannedState::invalid_index: return "invalid_index";
  }
  return "pending";
}

std::string_view to_text(StatusState state) noexcept {
  switch (state) {
    case StatusState::current: return "current";
    case StatusState::pending: return "pending";
    case StatusState::running: return "running";
    case StatusState::failed: return "failed";
    case StatusState::interrupted: return "interrupted";
    case StatusState::invalid_index: return "invalid_index";
    case StatusState::changed: return "changed";
    case StatusState::different: return "different";
    case StatusState::unreachable: return "unreachable";
  }
  return "pending";
}

std::string_view to_text(CellState state) noexcept {
  switch (state) {
    case CellState::none: return "";
    case CellState::ok: return "ok";
    case CellState::baseline: return "baseline";
    case CellState::pending: return "pending";
    case CellState::failed: return "failed";
    case CellState::changed: return "changed";
    case CellState::started: return "started";
    case CellState::invalid: return "invalid";
    case CellState::differs: return "differs";
  }
  return "";
}

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
