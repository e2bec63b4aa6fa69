// The rows of shardctl.schema_history (schema_history.hpp), without I/O, so pure code (the
// per-shard plan of `shardctl schema`, lib/schema/plan.hpp) can take them. The words of the
// table's kind and success columns are only in the two tables below.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/words.hpp"

namespace shardctl::shardside {

// What a row records (column kind): an attempt of a versioned or repeatable migration file, or
// a baseline (a file recorded as applied without running it, or the "<baseline>" marker).
enum class SchemaHistoryKind { versioned, repeatable, baseline };
inline constexpr auto schema_history_kind_words =
    words<SchemaHistoryKind>({{SchemaHistoryKind::versioned, "versioned"}, {SchemaHistoryKind::repeatable, "repeatable"},
                              {SchemaHistoryKind::baseline, "baseline"}})
        .otherwise("versioned")  // a value out of range prints as versioned
        .stored_as("kind", "shardctl.schema_history");
constexpr const auto& words_of(SchemaHistoryKind) noexcept { return schema_history_kind_words; }

// How an attempt ended (column success): true, false, or NULL while a no-transaction file
// runs (and for good when its run was killed or lost its connection: its statements may have
// run, or not).
enum class SchemaHistoryOutcome { succeeded, failed, unfinished };
// The column's value as text (`success::text`, NULL as "null").
inline constexpr auto schema_history_outcome_words =
    words<SchemaHistoryOutcome>({{SchemaHistoryOutcome::succeeded, "true"}, {SchemaHistoryOutcome::failed, "false"},
                                 {SchemaHistoryOutcome::unfinished, "null"}})
        .otherwise("false")  // a value out of range prints as false
        .stored_as("success value", "shardctl.schema_history");
constexpr const auto& words_of(SchemaHistoryOutcome) noexcept { return schema_history_outcome_words; }
using shardctl::operator<<;
using shardctl::to_text;

// One row as read.
struct SchemaHistoryRow {
  std::int64_t id = 0;
  std::optional<std::string> version;  // null for repeatable rows
  std::string name;                    // file name (a baseline without files: "<baseline>")
  SchemaHistoryKind kind = SchemaHistoryKind::versioned;
  std::string checksum;                // "sha256:<hex>"; empty for a baseline marker
  std::string applied_at;
  std::int64_t duration_ms = 0;
  std::string applied_by;
  SchemaHistoryOutcome outcome = SchemaHistoryOutcome::failed;
  bool succeeded() const noexcept { return outcome == SchemaHistoryOutcome::succeeded; }
  bool unfinished() const noexcept { return outcome == SchemaHistoryOutcome::unfinished; }
  // The "<baseline>" marker: a baseline row without a checksum, which names no file and covers
  // every version up to its own.
  bool baseline_marker() const noexcept { return kind == SchemaHistoryKind::baseline && checksum.empty(); }
};

// One row as written (INSERT parameters).
struct NewSchemaHistoryRow {
  std::optional<std::string> version;
  std::string name;
  SchemaHistoryKind kind = SchemaHistoryKind::versioned;
  std::optional<std::string> checksum;
  std::int64_t duration_ms = 0;
  SchemaHistoryOutcome outcome = SchemaHistoryOutcome::succeeded;  // unfinished: started, outcome not known yet
  std::string note;                                                // "" for none
};

}  // namespace shardctl::shardside
