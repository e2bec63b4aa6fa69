// What a run of an online operation (split/merge/move --online) does with each batch from its
// journaled step, and what a cancel does to it (migrate/batch_step.hpp).
#include <doctest/doctest.h>

#include "migrate/batch_step.hpp"

// Its own namespace: unit_tests is a unity build.
namespace test_migrate_online_steps {

namespace migrate = shardctl::migrate;
using migrate::BatchStep;
using migrate::OnCancel;
using migrate::OnlineFrom;

TEST_CASE("an online run resumes each batch from its journaled step") {
  CHECK(migrate::online_resume_from(BatchStep::planned) == OnlineFrom::start_stream);
  // Streaming: objects may exist and the copy may have committed, but the slot's exported
  // snapshot ended with the killed process: everything is dropped and the stream starts again.
  CHECK(migrate::online_resume_from(BatchStep::streaming) == OnlineFrom::restart_stream);
  // Copied: the slot keeps every change since the copy's snapshot; catch up, then cut over.
  CHECK(migrate::online_resume_from(BatchStep::copied) == OnlineFrom::cut_over);
  CHECK(migrate::online_resume_from(BatchStep::flipped) == OnlineFrom::purge);
  CHECK(migrate::online_resume_from(BatchStep::done) == OnlineFrom::skip);
}

TEST_CASE("a cancel rolls an online batch back until its flip, and finishes it after") {
  CHECK(migrate::on_cancel(OnlineFrom::start_stream) == OnCancel::stop_before);
  CHECK(migrate::on_cancel(OnlineFrom::restart_stream) == OnCancel::roll_back);
  CHECK(migrate::on_cancel(OnlineFrom::cut_over) == OnCancel::roll_back);
  CHECK(migrate::on_cancel(OnlineFrom::purge) == OnCancel::carry_on);
  CHECK(migrate::on_cancel(OnlineFrom::skip) == OnCancel::carry_on);
}

TEST_CASE("streaming comes after planned and before copied in the journal's order") {
  CHECK(migrate::has_reached(BatchStep::streaming, BatchStep::planned));
  CHECK_FALSE(migrate::has_reached(BatchStep::streaming, BatchStep::copied));
  CHECK(read_word<migrate::BatchStep>("streaming") == BatchStep::streaming);
}

}  // namespace test_migrate_online_steps
