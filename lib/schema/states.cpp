// The schema states (states.hpp): a cell's word, and the file kind a history row records.
#include "schema/states.hpp"

namespace shardctl::schema {

shardside::SchemaHistoryKind history_kind(Kind kind) noexcept {
  return kind == Kind::repeatable ? shardside::SchemaHistoryKind::repeatable : shardside::SchemaHistoryKind::versioned;
}

std::string to_text(const Cell& cell) {
  return cell.state == CellState::differs ? cell.checksum : std::string(to_text(cell.state));
}

std::ostream& operator<<(std::ostream& out, const Cell& cell) { return out << to_text(cell); }

}  // namespace shardctl::schema
