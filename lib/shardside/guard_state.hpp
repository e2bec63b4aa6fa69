// The state of a write guard's range on a shard, apart from the guard's statements
// (guard.hpp), so pure code (migrate/batch_step.hpp) can decide on it without a connection.
#pragma once

#include "core/words.hpp"

namespace shardctl::shardside {

// A range's state (the CHECK of guard_ranges.state in sql/guard.sql): offline while its batch
// moves (writes refused, the purge excepted), fenced once its keys moved away (writes refused
// with the new shard's name until the fence expires or is lifted), cutover while an online
// move cuts its batch over (writes wait for the cut-over's end, then see what it left).
enum class GuardState { offline, fenced, cutover };
inline constexpr auto guard_state_words = words<GuardState>(
    {{GuardState::offline, "offline"}, {GuardState::fenced, "fenced"}, {GuardState::cutover, "cutover"}});
constexpr const auto& words_of(GuardState) noexcept { return guard_state_words; }
using shardctl::operator<<;
using shardctl::to_text;

}  // namespace shardctl::shardside
