// An archive run's shard states and batch steps (archive/run_journal.hpp): the words
// shardctl.archive_shards.state and shardctl.archive_batches.step hold (and `archive show` and
// its JSON print) read back as the same values, and an unknown word is an internal error naming it.
#include <doctest/doctest.h>

#include "archive/run_journal.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_archive_run_states {

namespace archive = shardctl::archive;
namespace test = shardctl::test;
using archive::BatchStep;
using archive::ShardState;

TEST_CASE("archive shard states round-trip through the catalog's words") {
  const std::pair<ShardState, const char*> words[] = {
      {ShardState::pending, "pending"}, {ShardState::running, "running"}, {ShardState::done, "done"}};
  test::check_table(archive::shard_state_words, words);
  test::check_words(words, archive::shard_state_from_text);
  test::check_streamed(words);
}

TEST_CASE("archive batch steps round-trip through the catalog's words") {
  const std::pair<BatchStep, const char*> words[] = {
      {BatchStep::selected, "selected"}, {BatchStep::delivered, "delivered"}, {BatchStep::deleted, "deleted"}};
  test::check_table(archive::batch_step_words, words);
  test::check_words(words, archive::batch_step_from_text);
  test::check_streamed(words);
}

TEST_CASE("an unknown archive state or step from the catalog is an internal error naming it") {
  test::check_unknown_words(archive::shard_state_from_text, {"", "Done", "done ", "paused"},
                            "unknown archive shard state '{}' in shardctl.archive_shards");
  test::check_unknown_words(archive::batch_step_from_text, {"", "Deleted", "deleted ", "done"},
                            "unknown archive batch step '{}' in shardctl.archive_batches");
}

}  // namespace test_archive_run_states
