#include "migrate/batch_step.hpp"

namespace shardctl::migrate {

ResumeFrom resume_from(BatchStep step) noexcept {
  switch (step) {
    case BatchStep::planned: return ResumeFrom::take_offline;
    case BatchStep::streaming:  // (online only; as offline, should it ever be read here)
    case BatchStep::offline:
    case BatchStep::copied: return ResumeFrom::guard_and_copy;
    case BatchStep::flipped: return ResumeFrom::purge;
    case BatchStep::done: return ResumeFrom::skip;
  }
  return ResumeFrom::skip;
}

OnlineFrom online_resume_from(BatchStep step) noexcept {
  switch (step) {
    case BatchStep::planned: return OnlineFrom::start_stream;
    case BatchStep::streaming:
    case BatchStep::offline: return OnlineFrom::restart_stream;
    case BatchStep::copied: return OnlineFrom::cut_over;
    case BatchStep::flipped: return OnlineFrom::purge;
    case BatchStep::done: return OnlineFrom::skip;
  }
  return OnlineFrom::skip;
}

bool has_reached(BatchStep journaled, BatchStep step) noexcept {
  // The enum lists the steps in the order the protocol journals them.
  return static_cast<int>(journaled) >= static_cast<int>(step);
}

OnCancel on_cancel(ResumeFrom from) noexcept {
  switch (from) {
    case ResumeFrom::take_offline: return OnCancel::stop_before;
    case ResumeFrom::guard_and_copy: return OnCancel::roll_back;
    case ResumeFrom::purge:
    case ResumeFrom::skip: return OnCancel::carry_on;
  }
  return OnCancel::carry_on;
}

OnCancel on_cancel(OnlineFrom from) noexcept {
  switch (from) {
    case OnlineFrom::start_stream: return OnCancel::stop_before;
    case OnlineFrom::restart_stream:
    case OnlineFrom::cut_over: return OnCancel::roll_back;
    case OnlineFrom::purge:
    case OnlineFrom::skip: return OnCancel::carry_on;
  }
  return OnCancel::carry_on;
}

PurgeFrom purge_from(std::optional<shardside::GuardState> guard_state) noexcept {
  if (!guard_state) return PurgeFrom::guard_again;
  if (*guard_state == shardside::GuardState::fenced) return PurgeFrom::nothing;
  return PurgeFrom::purge;
}

}  // namespace shardctl::migrate
