// The step a batch of a split, merge or move reached, as shardctl.op_batches.step journals it:
// planned -> offline -> copied -> flipped -> done (a cancel rolls offline/copied back to
// planned). The words are the catalog's; code compares the enum. Text only here.
#pragma once

#include <string_view>

namespace shardctl::migrate {

enum class BatchStep { planned, offline, copied, flipped, done };

std::string_view to_text(BatchStep step) noexcept;
// The step a catalog word names; an unknown word is an internal Error (70) naming it.
BatchStep batch_step_from_text(std::string_view word);

// What a run does first with a batch journaled at `step` (Runner::run): nothing (done), take it
// offline (planned), guard it again and copy (offline, copied: the guard may not have
// committed), or only purge (flipped: verified and routed to the target already).
enum class ResumeFrom { skip, take_offline, guard_and_copy, purge };
ResumeFrom resume_from(BatchStep step) noexcept;

}  // namespace shardctl::migrate
