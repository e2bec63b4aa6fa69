// shardctl.schema_history's kind and success columns (shardside/schema_history_row.hpp): the
// words shards hold read back as the same values, and an unknown word from a shard is an
// internal error naming it.
#include <doctest/doctest.h>

#include "shardside/schema_history_row.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these names must not meet another file's.
namespace shardctl::test::shardside_schema_history_words {

namespace ss = shardside;
using ss::SchemaHistoryKind;
using ss::SchemaHistoryOutcome;

TEST_CASE("schema history kinds and outcomes round-trip through the table's words (success::text, NULL read as null)") {
  check_column_words(ss::schema_history_kind_words, read_as<ss::SchemaHistoryKind>,
                     {{SchemaHistoryKind::versioned, "versioned"}, {SchemaHistoryKind::repeatable, "repeatable"},
                      {SchemaHistoryKind::baseline, "baseline"}});
  check_column_words(ss::schema_history_outcome_words, read_as<ss::SchemaHistoryOutcome>,
                     {{SchemaHistoryOutcome::succeeded, "true"}, {SchemaHistoryOutcome::failed, "false"},
                      {SchemaHistoryOutcome::unfinished, "null"}});
}

TEST_CASE("a row whose success is NULL is unfinished, not succeeded") {
  ss::SchemaHistoryRow row;
  row.outcome = SchemaHistoryOutcome::unfinished;
  CHECK(row.unfinished());
  CHECK_FALSE(row.succeeded());
}

TEST_CASE("a baseline row without a checksum is the marker; with one it names a file") {
  ss::SchemaHistoryRow row;
  row.kind = SchemaHistoryKind::baseline;
  CHECK(row.baseline_marker());
  row.checksum = "sha256:ab";
  CHECK_FALSE(row.baseline_marker());
  row.checksum.clear();
  row.kind = SchemaHistoryKind::versioned;
  CHECK_FALSE(row.baseline_marker());
}

TEST_CASE("an unknown kind or success value from a shard is an internal error naming it") {
  check_unknown_words(read_as<ss::SchemaHistoryKind>, {"Versioned", "", "undo"},
                      "unknown kind '{}' in shardctl.schema_history");
  check_unknown_words(read_as<ss::SchemaHistoryOutcome>, {"t"}, "unknown success value '{}' in shardctl.schema_history");
}

}  // namespace shardctl::test::shardside_schema_history_words
