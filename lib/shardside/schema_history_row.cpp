// The words of shardctl.schema_history's kind and success columns (sql/schema_history.sql):
// what shards hold, and what `shardctl schema` reads back and writes.
#include "shardside/schema_history_row.hpp"

#include <string>

#include "core/error.hpp"

namespace shardctl::shardside {

std::string_view to_text(SchemaHistoryKind kind) noexcept {
  switch (kind) {
    case SchemaHistoryKind::versioned: return "versioned";
    case SchemaHistoryKind::repeatable: return "repeatable";
    case SchemaHistoryKind::baseline: return "baseline";
  }
  return "versioned";
}

std::string_view to_text(SchemaHistoryOutcome outcome) noexcept {
  switch (outcome) {
    case SchemaHistoryOutcome::succeeded: return "true";
    case SchemaHistoryOutcome::failed: return "false";
    case SchemaHistoryOutcome::unfinished: return "null";
  }
  return "false";
}

std::ostream& operator<<(std::ostream& out, SchemaHistoryKind kind) { return out << to_text(kind); }
std::ostream& operator<<(std::ostream& out, SchemaHistoryOutcome outcome) { return out << to_text(outcome); }

SchemaHistoryKind schema_history_kind_from_text(std::string_view word) {
  for (auto k : {SchemaHistoryKind::versioned, SchemaHistoryKind::repeatable, SchemaHistoryKind::baseline})
    if (to_text(k) == word) return k;
  throw internal_error("unknown kind '" + std::string(word) + "' in shardctl.schema_history");
}

SchemaHistoryOutcome schema_history_outcome_from_text(std::string_view word) {
  for (auto o : {SchemaHistoryOutcome::succeeded, SchemaHistoryOutcome::failed, SchemaHistoryOutcome::unfinished})
    if (to_text(o) == word) return o;
  throw internal_error("unknown success value '" + std::string(word) + "' in shardctl.schema_history");
}

}  // namespace shardctl::shardside
