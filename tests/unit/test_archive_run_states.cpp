// An archive run's shard states and batch steps (archive/run_journal.hpp): the words
// shardctl.archive_shards.state and shardctl.archive_batches.step hold (and `archive show` and
// its JSON print) read back as the same values, and an unknown word is an internal error naming it.
#include <doctest/doctest.h>

#include "archive/run_journal.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these names must not meet another file's.
namespace shardctl::test::archive_run_states {

using archive::BatchStep;
using archive::ShardState;

TEST_CASE("archive shard states and batch steps round-trip through the catalog's words") {
  check_column_words(archive::shard_state_words, read_as<archive::ShardState>,
                     {{ShardState::pending, "pending"}, {ShardState::running, "running"}, {ShardState::done, "done"}});
  check_column_words(
      archive::batch_step_words, read_as<archive::BatchStep>,
      {{BatchStep::selected, "selected"}, {BatchStep::delivered, "delivered"}, {BatchStep::deleted, "deleted"}});
}

TEST_CASE("an unknown archive state or step from the catalog is an internal error naming it") {
  check_unknown_words(read_as<archive::ShardState>, {"", "Done", "done ", "paused"},
                      "unknown archive shard state '{}' in shardctl.archive_shards");
  check_unknown_words(read_as<archive::BatchStep>, {"", "Deleted", "deleted ", "done"},
                      "unknown archive batch step '{}' in shardctl.archive_batches");
}

}  // namespace shardctl::test::archive_run_states
