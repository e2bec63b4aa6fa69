// The schema states (schema/states.hpp): each value has its one word, the one JSON, JUnit and
// text output show, and no two values of a type share a word.
#include <doctest/doctest.h>

#include "schema/states.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these names must not meet another file's.
namespace shardctl::test::schema_states {

using namespace schema;

TEST_CASE("apply, baseline and repair states have the words of the JSON and text output") {
  check_printed_words<RecordedState>({{RecordedState::applied, "applied"}, {RecordedState::failed, "failed"},
                                      {RecordedState::started, "started"}, {RecordedState::not_run, "not_run"}});
  check_printed_words<FileRunState>({{FileRunState::applied, "applied"}, {FileRunState::failed, "failed"},
                                     {FileRunState::locked, "locked"}, {FileRunState::unreachable, "unreachable"}});
  check_printed_words<ShardState>({{ShardState::ok, "ok"}, {ShardState::failed, "failed"},
                                   {ShardState::locked, "locked"}, {ShardState::unreachable, "unreachable"},
                                   {ShardState::skipped, "skipped"}});
  check_printed_words<RepairState>({{RepairState::ok, "ok"}, {RepairState::refused, "refused"},
                                    {RepairState::locked, "locked"}, {RepairState::unreachable, "unreachable"},
                                    {RepairState::skipped, "skipped"}});
  check_printed_words<RepairMark>({{RepairMark::applied, "applied"}, {RepairMark::failed, "failed"}});
  check_printed_words<PlannedState>({{PlannedState::up_to_date, "up_to_date"}, {PlannedState::pending, "pending"},
                                     {PlannedState::unreachable, "unreachable"},
                                     {PlannedState::interrupted, "interrupted"}, {PlannedState::running, "running"},
                                     {PlannedState::invalid_index, "invalid_index"}});
}

TEST_CASE("status states and cells have the words of the JSON output") {
  check_printed_words<StatusState>({{StatusState::current, "current"}, {StatusState::pending, "pending"},
                                    {StatusState::running, "running"}, {StatusState::failed, "failed"},
                                    {StatusState::interrupted, "interrupted"},
                                    {StatusState::invalid_index, "invalid_index"}, {StatusState::changed, "changed"},
                                    {StatusState::different, "different"}, {StatusState::unreachable, "unreachable"}});
  check_printed_words<CellState>({{CellState::none, ""}, {CellState::ok, "ok"}, {CellState::baseline, "baseline"},
                                  {CellState::pending, "pending"}, {CellState::failed, "failed"},
                                  {CellState::changed, "changed"}, {CellState::started, "started"},
                                  {CellState::invalid, "invalid"}, {CellState::differs, "differs"}});
  // A cell where shards differ shows this shard's checksum, not a word.
  CHECK(to_text(Cell{CellState::differs, "sha256:0123456789ab"}) == "sha256:0123456789ab");
  CHECK(to_text(Cell{CellState::pending}) == "pending");
}

TEST_CASE("a file's kind is its history rows' kind") {
  CHECK(history_kind(Kind::versioned) == shardside::SchemaHistoryKind::versioned);
  CHECK(history_kind(Kind::repeatable) == shardside::SchemaHistoryKind::repeatable);
}

}  // namespace shardctl::test::schema_states
