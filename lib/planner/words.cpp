// The words of the planner's enums: plan and fleet files, `rebalance plan` text and JSON. The
// files' words are a contract (a plan written by one version is applied by the next), so they
// are spelled here once and compared nowhere else.
#include <array>
#include <utility>

#include "core/error.hpp"
#include "planner/planner.hpp"

namespace shardctl::planner {
namespace {

// The value whose word is `name`, among `all`.
template <class E, std::size_t N>
std::optional<E> named(const std::array<E, N>& all, std::string_view (*word)(E) noexcept, std::string_view name) {
  for (E e : all)
    if (word(e) == name) return e;
  return std::nullopt;
}

constexpr std::array<Objective, 3> all_objectives{Objective::size, Objective::load, Objective::both};
constexpr std::array<StepKind, 3> all_step_kinds{StepKind::split, StepKind::move, StepKind::merge};
constexpr std::array<ShardStatus, 3> all_shard_statuses{ShardStatus::online, ShardStatus::readonly, ShardStatus::offline};

}  // namespace

std::string_view objective_name(Objective o) noexcept {
  switch (o) {
    case Objective::size: return "size";
    case Objective::load: return "load";
    case Objective::both: return "both";
  }
  return "?";
}

std::optional<Objective> objective_named(std::string_view name) { return named(all_objectives, objective_name, name); }

Objective parse_objective(std::string_view name) {
  if (auto o = objective_named(name)) return *o;
  throw usage_error("unknown objective '" + std::string(name) + "'", "use size, load or both");
}

std::string_view step_kind_name(StepKind k) noexcept {
  switch (k) {
    case StepKind::split: return "split";
    case StepKind::move: return "move";
    case StepKind::merge: return "merge";
  }
  return "?";
}

std::optional<StepKind> step_kind_named(std::string_view name) { return named(all_step_kinds, step_kind_name, name); }

std::string_view shard_status_name(ShardStatus s) noexcept {
  switch (s) {
    case ShardStatus::online: return "online";
    case ShardStatus::readonly: return "readonly";
    case ShardStatus::offline: return "offline";
  }
  return "online";
}

std::optional<ShardStatus> shard_status_named(std::string_view name) {
  return named(all_shard_statuses, shard_status_name, name);
}

std::string_view moving_side_name(bool move_upper) noexcept { return move_upper ? "upper" : "lower"; }

std::optional<bool> moving_side_named(std::string_view name) {
  for (bool upper : {true, false})
    if (moving_side_name(upper) == name) return upper;
  return std::nullopt;
}

}  // namespace shardctl::planner
