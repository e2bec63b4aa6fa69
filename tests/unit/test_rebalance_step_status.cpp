// A rebalance step's status (rebalance/journal.hpp): the words of shardctl.rebalance_steps read
// back as the same status, an unknown word refused as an internal error naming it; and the
// outcome `rebalance apply` reports per step (rebalance/apply.hpp), in the words it always showed.
#include <doctest/doctest.h>

#include "rebalance/apply.hpp"
#include "rebalance/journal.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these names must not meet another file's.
namespace shardctl::test::rebalance_step_status {

using rebalance::StepStatus;

TEST_CASE("rebalance step statuses round-trip through the catalog's words") {
  check_column_words(
      rebalance::step_status_words, read_as<rebalance::StepStatus>,
      {{StepStatus::pending, "pending"}, {StepStatus::running, "running"}, {StepStatus::done, "done"}, {StepStatus::failed, "failed"}});
  // skipped: a report's word, never journaled.
  check_unknown_words(read_as<rebalance::StepStatus>, {"skipped"},
                      "unknown rebalance step status '{}' in shardctl.rebalance_steps");
}

TEST_CASE("each step outcome reads as apply has always shown it") {
  using rebalance::StepOutcome;
  const std::pair<StepOutcome, const char*> words[] = {
      {StepOutcome::pending, "pending"},         {StepOutcome::skipped, "skipped"},
      {StepOutcome::done, "done"},               {StepOutcome::failed, "failed"},
      {StepOutcome::would_run, "would run"},     {StepOutcome::would_resume, "would resume"},
      {StepOutcome::would_fail, "would fail"}};
  for (const auto& [outcome, word] : words) {
    rebalance::StepResult r;
    r.status = outcome;
    CHECK(rebalance::status_text(r) == word);
  }
  rebalance::StepResult waits;
  waits.status = StepOutcome::would_run_after;
  waits.after = 3;
  CHECK(rebalance::status_text(waits) == "would run after step 3");
}

}  // namespace shardctl::test::rebalance_step_status
