#include "migrate/batch_step.hpp"

#include <string>

#include "core/error.hpp"

namespace shardctl::migrate {

std::string_view to_text(BatchStep step) noexcept {
  switch (step) {
    case BatchStep::planned: return "planned";
    case BatchStep::offline: return "offline";
    case BatchStep::copied: return "copied";
    case BatchStep::flipped: return "flipped";
    case BatchStep::done: return "done";
  }
  return "planned";
}

BatchStep batch_step_from_text(std::string_view word) {
  for (auto s : {BatchStep::planned, BatchStep::offline, BatchStep::copied, BatchStep::flipped, BatchStep::done})
    if (to_text(s) == word) return s;
  throw internal_error("unknown batch step '" + std::string(word) + "' in shardctl.op_batches");
}

ResumeFrom resume_from(BatchStep step) noexcept {
  switch (step) {
    case BatchStep::planned: return ResumeFrom::take_offline;
    case BatchStep::offline:
    case BatchStep::copied: return ResumeFrom::guard_and_copy;
    case BatchStep::flipped: return ResumeFrom::purge;
    case BatchStep::done: return ResumeFrom::skip;
  }
  return ResumeFrom::skip;
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

PurgeFrom purge_from(std::optional<shardside::GuardState> guard_state) noexcept {
  if (!guard_state) return PurgeFrom::guard_again;
  if (*guard_state == shardside::GuardState::fenced) return PurgeFrom::nothing;
  return PurgeFrom::purge;
}

}  // namespace shardctl::migrate
