// The words of shardctl.schema_history's kind and success columns (sql/schema_history.sql):
// what shards hold, and what `shardctl schema` reads back and writes. Their tables are in the
// header.
#include "shardside/schema_history_row.hpp"

namespace shardctl::shardside {

// An out-of-range value prints as it always has: versioned, false.
std::string_view to_text(SchemaHistoryKind kind) noexcept { return schema_history_kind_words.text_or(kind, "versioned"); }
std::string_view to_text(SchemaHistoryOutcome outcome) noexcept {
  return schema_history_outcome_words.text_or(outcome, "false");
}

std::ostream& operator<<(std::ostream& out, SchemaHistoryKind kind) { return out << to_text(kind); }
std::ostream& operator<<(std::ostream& out, SchemaHistoryOutcome outcome) { return out << to_text(outcome); }

SchemaHistoryKind schema_history_kind_from_text(std::string_view word) {
  return schema_history_kind_words.read(word, "kind", "shardctl.schema_history");
}

SchemaHistoryOutcome schema_history_outcome_from_text(std::string_view word) {
  return schema_history_outcome_words.read(word, "success value", "shardctl.schema_history");
}

}  // namespace shardctl::shardside
