// The step a batch of a split, merge or move reached, as shardctl.op_batches.step journals it:
// planned -> offline -> copied -> flipped -> done, or online (--online, online.hpp) planned ->
// streaming -> copied -> flipped -> done (a cancel rolls streaming/offline/copied back to
// planned). The words are the catalog's; code compares the enum. Text only in its table. Also,
// without a database, what a run (first or resumed) does with a batch at each step: where it
// resumes it, what a cancel does to it, where its purge starts.
#pragma once

#include <optional>
#include <string_view>

#include "core/words.hpp"
#include "shardside/guard_state.hpp"

namespace shardctl::migrate {

enum class BatchStep { planned, streaming, offline, copied, flipped, done };  // in the protocols' order
inline constexpr auto batch_step_words =
    words<BatchStep>({{BatchStep::planned, "planned"}, {BatchStep::streaming, "streaming"}, {BatchStep::offline, "offline"},
                      {BatchStep::copied, "copied"}, {BatchStep::flipped, "flipped"}, {BatchStep::done, "done"}})
        .otherwise("planned")  // a value out of range prints as planned
        .stored_as("batch step", "shardctl.op_batches");
constexpr const auto& words_of(BatchStep) noexcept { return batch_step_words; }
using shardctl::operator<<;
using shardctl::to_text;

// What a run does first with a batch journaled at `step` (Runner::run): nothing (done), take it
// offline (planned), guard it again and copy (offline, copied: the guard may not have
// committed), or only purge (flipped: verified and routed to the target already).
enum class ResumeFrom { skip, take_offline, guard_and_copy, purge };
ResumeFrom resume_from(BatchStep step) noexcept;

// The same for a batch of an online operation: start its stream (planned), drop what an
// interrupted start left and start again (streaming: the slot's snapshot died with its
// session), catch up and cut over (copied), only purge (flipped), nothing (done). An offline
// word in an online operation's journal is an internal error's business, not this table's.
enum class OnlineFrom { skip, start_stream, restart_stream, cut_over, purge };
OnlineFrom online_resume_from(BatchStep step) noexcept;

// Whether a batch journaled at `journaled` has reached `step` already, in the protocol's order
// (a resumed run journals no step twice).
bool has_reached(BatchStep journaled, BatchStep step) noexcept;

// What a run that is to cancel the operation does with the batch it resumes `from`: stop
// before it (nothing of it happened yet), roll it back and stop (in flight: offline or copied),
// or carry on (flipped: its keys already live on the target, only its purge is left; or done).
enum class OnCancel { carry_on, stop_before, roll_back };
OnCancel on_cancel(ResumeFrom from) noexcept;
OnCancel on_cancel(OnlineFrom from) noexcept;

// What the purge of a flipped batch does, from the batch's guard state on its source
// (guard.hpp): nothing (fenced: an earlier run purged it and fenced its keys), guard the
// range again first (no range: the guard was lost with a restored shard), or purge (offline).
enum class PurgeFrom { nothing, guard_again, purge };
PurgeFrom purge_from(std::optional<shardside::GuardState> guard_state) noexcept;

}  // namespace shardctl::migrate
