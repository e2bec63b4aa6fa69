// An archive run's shard states and batch steps (archive/run_journal.hpp): the words
// shardctl.archive_shards.state and shardctl.archive_batches.step hold (and `archive show` and
// its JSON print) read back as the same values, and an unknown word is an internal error naming it.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "archive/run_journal.hpp"
#include "core/error.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_archive_run_states {

namespace archive = shardctl::archive;
using archive::BatchStep;
using archive::ShardState;

TEST_CASE("archive shard states round-trip through the catalog's words") {
  const std::pair<ShardState, const char*> words[] = {
      {ShardState::pending, "pending"}, {ShardState::running, "running"}, {ShardState::done, "done"}};
  for (const auto& [state, word] : words) {
    CHECK(archive::to_text(state) == word);
    CHECK(archive::shard_state_from_text(word) == state);
    std::ostringstream out;
    out << state;
    CHECK(out.str() == word);
  }
}

TEST_CASE("archive batch steps round-trip through the catalog's words") {
  const std::pair<BatchStep, const char*> words[] = {
      {BatchStep::selected, "selected"}, {BatchStep::delivered, "delivered"}, {BatchStep::deleted, "deleted"}};
  for (const auto& [step, word] : words) {
    CHECK(archive::to_text(step) == word);
    CHECK(archive::batch_step_from_text(word) == step);
    std::ostringstream out;
    out << step;
    CHECK(out.str() == word);
  }
}

TEST_CASE("an unknown archive state or step from the catalog is an internal error naming it") {
  for (const char* word : {"", "Done", "done ", "paused"}) {
    try {
      archive::shard_state_from_text(word);
      FAIL("accepted shard state '" << word << "'");
    } catch (const shardctl::Error& e) {
      CHECK(e.kind() == shardctl::ErrorKind::internal);
      CHECK(std::string(e.what()) == "unknown archive shard state '" + std::string(word) + "' in shardctl.archive_shards");
    }
  }
  for (const char* word : {"", "Deleted", "deleted ", "done"}) {
    try {
      archive::batch_step_from_text(word);
      FAIL("accepted batch step '" << word << "'");
    } catch (const shardctl::Error& e) {
      CHECK(e.kind() == shardctl::ErrorKind::internal);
      CHECK(std::string(e.what()) == "unknown archive batch step '" + std::string(word) + "' in shardctl.archive_batches");
    }
  }
}

}  // namespace test_archive_run_states
