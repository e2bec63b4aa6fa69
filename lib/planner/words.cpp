// The words of the planner's enums: plan and fleet files, `rebalance plan` text and JSON. The
// files' words are a contract (a plan written by one version is applied by the next), so they
// are spelled here once, one core/words.hpp table each, and compared nowhere else.
#include <string>

#include "core/error.hpp"
#include "core/words.hpp"
#include "planner/planner.hpp"

namespace shardctl::planner {
namespace {

constexpr auto objective_words =
    words<Objective>({{Objective::size, "size"}, {Objective::load, "load"}, {Objective::both, "both"}});
constexpr auto step_kind_words =
    words<StepKind>({{StepKind::split, "split"}, {StepKind::move, "move"}, {StepKind::merge, "merge"}});
constexpr auto shard_status_words =
    words<ShardStatus>({{ShardStatus::online, "online"}, {ShardStatus::readonly, "readonly"}, {ShardStatus::offline, "offline"}});
// Step::move_upper: whether a split moves the upper or the lower part of the range.
constexpr auto moving_side_words = words<bool>({{true, "upper"}, {false, "lower"}});

}  // namespace

// An out-of-range value prints as it always has: "?" for an objective or step kind, online for
// a status.
std::string_view objective_name(Objective o) noexcept { return objective_words.text_or(o, "?"); }
std::optional<Objective> objective_named(std::string_view name) { return objective_words.find(name); }

Objective parse_objective(std::string_view name) {
  if (auto o = objective_named(name)) return *o;
  throw usage_error("unknown objective '" + std::string(name) + "'", "use size, load or both");
}

std::string_view step_kind_name(StepKind k) noexcept { return step_kind_words.text_or(k, "?"); }
std::optional<StepKind> step_kind_named(std::string_view name) { return step_kind_words.find(name); }

std::string_view shard_status_name(ShardStatus s) noexcept { return shard_status_words.text_or(s, "online"); }
std::optional<ShardStatus> shard_status_named(std::string_view name) { return shard_status_words.find(name); }

std::string_view moving_side_name(bool move_upper) noexcept { return moving_side_words.text(move_upper); }
std::optional<bool> moving_side_named(std::string_view name) { return moving_side_words.find(name); }

}  // namespace shardctl::planner
