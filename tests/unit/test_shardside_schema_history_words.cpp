// shardctl.schema_history's kind and success columns (shardside/schema_history_row.hpp): the
// words shards hold read back as the same values, and an unknown word from a shard is an
// internal error naming it.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "core/error.hpp"
#include "shardside/schema_history_row.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_shardside_schema_history_words {

namespace ss = shardctl::shardside;
using ss::SchemaHistoryKind;
using ss::SchemaHistoryOutcome;

TEST_CASE("schema history kinds round-trip through the table's words") {
  const std::pair<SchemaHistoryKind, const char*> words[] = {
      {SchemaHistoryKind::versioned, "versioned"}, {SchemaHistoryKind::repeatable, "repeatable"},
      {SchemaHistoryKind::baseline, "baseline"}};
  for (const auto& [kind, word] : words) {
    CHECK(ss::to_text(kind) == word);
    CHECK(ss::schema_history_kind_from_text(word) == kind);
    std::ostringstream out;
    out << kind;
    CHECK(out.str() == word);
  }
}

TEST_CASE("schema history outcomes round-trip through success::text (NULL read as null)") {
  const std::pair<SchemaHistoryOutcome, const char*> words[] = {
      {SchemaHistoryOutcome::succeeded, "true"}, {SchemaHistoryOutcome::failed, "false"},
      {SchemaHistoryOutcome::unfinished, "null"}};
  for (const auto& [outcome, word] : words) {
    CHECK(ss::to_text(outcome) == word);
    CHECK(ss::schema_history_outcome_from_text(word) == outcome);
  }
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
  for (auto bad : {"Versioned", "", "undo"}) {
    try {
      ss::schema_history_kind_from_text(bad);
      FAIL("accepted kind '" << bad << "'");
    } catch (const shardctl::Error& e) {
      CHECK(e.kind() == shardctl::ErrorKind::internal);
      CHECK(std::string(e.what()) == "unknown kind '" + std::string(bad) + "' in shardctl.schema_history");
    }
  }
  try {
    ss::schema_history_outcome_from_text("t");
    FAIL("accepted success value 't'");
  } catch (const shardctl::Error& e) {
    CHECK(e.kind() == shardctl::ErrorKind::internal);
    CHECK(std::string(e.what()) == "unknown success value 't' in shardctl.schema_history");
  }
}

}  // namespace test_shardside_schema_history_words
