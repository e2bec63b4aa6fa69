// A batch's step (migrate/batch_step.hpp): the words shardctl.op_batches.step journals, read back
// as the same step, an unknown word refused as an internal error naming it, and what a run
// (first or resumed) does with a batch at each step.
#include <doctest/doctest.h>

#include "migrate/batch_step.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these names must not meet another file's.
namespace shardctl::test::migrate_batch_step {

using migrate::BatchStep;
using migrate::ResumeFrom;

TEST_CASE("batch steps round-trip through the journal's words") {
  check_column_words(migrate::batch_step_words, read_as<migrate::BatchStep>,
                     {{BatchStep::planned, "planned"}, {BatchStep::streaming, "streaming"}, {BatchStep::offline, "offline"},
                      {BatchStep::copied, "copied"}, {BatchStep::flipped, "flipped"}, {BatchStep::done, "done"}});
}

TEST_CASE("an unknown batch step from the catalog is an internal error naming it") {
  check_unknown_words(read_as<migrate::BatchStep>, {"", "Done", "flipped ", "purged"},
                      "unknown batch step '{}' in shardctl.op_batches");
}

TEST_CASE("a run resumes each batch from its journaled step") {
  CHECK(migrate::resume_from(BatchStep::planned) == ResumeFrom::take_offline);
  // The guard may not have committed before a crash: it is installed again before the copy,
  // which finds a batch already on the target and does nothing.
  CHECK(migrate::resume_from(BatchStep::offline) == ResumeFrom::guard_and_copy);
  CHECK(migrate::resume_from(BatchStep::copied) == ResumeFrom::guard_and_copy);
  // Flipped: the map routes the keys to the target; only the purge of the source is left.
  CHECK(migrate::resume_from(BatchStep::flipped) == ResumeFrom::purge);
  CHECK(migrate::resume_from(BatchStep::done) == ResumeFrom::skip);
}

}  // namespace shardctl::test::migrate_batch_step
