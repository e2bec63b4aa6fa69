// What a run does with a batch at each journaled step beyond where it resumes it
// (migrate/batch_step.hpp): the order of the steps (no step journaled twice), what a cancel
// does to a batch at each step, and where a purge starts from the batch's guard on its source.
#include <doctest/doctest.h>

#include <iterator>
#include <string>

#include "migrate/batch_step.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_migrate_resume {

namespace migrate = shardctl::migrate;
using migrate::BatchStep;
using migrate::OnCancel;
using migrate::PurgeFrom;

// The protocol: planned -> offline -> copied -> flipped -> done.
constexpr BatchStep protocol[] = {BatchStep::planned, BatchStep::offline, BatchStep::copied, BatchStep::flipped, BatchStep::done};

TEST_CASE("a batch has reached its own step and every step before it, none after") {
  for (std::size_t at = 0; at < std::size(protocol); ++at)
    for (std::size_t step = 0; step < std::size(protocol); ++step) {
      std::string journaled(migrate::to_text(protocol[at])), asked(migrate::to_text(protocol[step]));
      CAPTURE(journaled);
      CAPTURE(asked);
      CHECK(migrate::has_reached(protocol[at], protocol[step]) == (step <= at));
    }
}

TEST_CASE("a resumed run journals the copy only for a batch not journaled copied") {
  // A batch taken offline in this run, or interrupted offline, is journaled copied after its copy;
  // one interrupted after its copy was journaled is not journaled again.
  CHECK_FALSE(migrate::has_reached(BatchStep::planned, BatchStep::copied));
  CHECK_FALSE(migrate::has_reached(BatchStep::offline, BatchStep::copied));
  CHECK(migrate::has_reached(BatchStep::copied, BatchStep::copied));
}

TEST_CASE("a cancel stops before a batch not yet offline, and changes nothing of it") {
  CHECK(migrate::on_cancel(migrate::resume_from(BatchStep::planned)) == OnCancel::stop_before);
}

TEST_CASE("a cancel rolls back the batch a killed run left in flight") {
  CHECK(migrate::on_cancel(migrate::resume_from(BatchStep::offline)) == OnCancel::roll_back);
  CHECK(migrate::on_cancel(migrate::resume_from(BatchStep::copied)) == OnCancel::roll_back);
}

TEST_CASE("a cancel carries a flipped batch on to its purge, and passes a done one") {
  // Flipped: the map routes its keys to the target already; only the source's copy is left.
  CHECK(migrate::on_cancel(migrate::resume_from(BatchStep::flipped)) == OnCancel::carry_on);
  CHECK(migrate::on_cancel(migrate::resume_from(BatchStep::done)) == OnCancel::carry_on);
}

TEST_CASE("a purge starts from the batch's guard state on its source") {
  // Fenced: an earlier run purged the batch and committed; there is nothing to delete.
  CHECK(migrate::purge_from(shardctl::shardside::GuardState::fenced) == PurgeFrom::nothing);
  // No guard row: the shard was restored from before the guard; it is installed again first.
  CHECK(migrate::purge_from(std::nullopt) == PurgeFrom::guard_again);
  CHECK(migrate::purge_from(shardctl::shardside::GuardState::offline) == PurgeFrom::purge);
}

}  // namespace test_migrate_resume
