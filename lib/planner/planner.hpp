// The rebalance planner: a pure function from measured stats to an ordered list of split, move
// and merge steps (shardctl-rebalance(1)). No I/O, no database: the caller builds a
// Fleet from a stats snapshot and the catalog, and turns the Plan's steps into operations.
// Every byte count here is live bytes: what rows occupy, never the dead space deleted rows
// leave in a table until it is reused (shardctl-rebalance(1); rebalance/fleet.hpp says where
// the numbers come from).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/words.hpp"
#include "routing/key.hpp"

namespace shardctl::planner {

// A shard's status as the planner sees it (the catalog's, mapped by the caller): only online
// shards receive data; offline ones cannot be read, so they cannot give either.
enum class ShardStatus { online, readonly, offline };

// One shard as the planner sees it.
struct Shard {
  std::string name;
  ShardStatus status = ShardStatus::online;
  std::int64_t capacity_bytes = 0;  // 0: not configured ([shards.NAME] capacity_bytes)
  double weight = 1.0;              // the shard's share of the data relative to the others
  std::int64_t fixed_bytes = 0;     // bytes no mapping accounts for (reference tables, system catalogs)
  double fixed_load = 0;            // load no mapping accounts for
};

// A slice of a mapping's key range (equi-depth histogram). The slices of a mapping are sorted and
// contiguous: slice i holds the keys [low_i, low_{i+1}), the last one up to the mapping's high
// bound; the first slice's low is the mapping's low bound (or its smallest key when unbounded).
// Keys are in the map's bound type: the key itself, or its 64-bit hash for hash maps.
struct Slice {
  routing::Key low;
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
  double load = 0;
  bool single_key = false;  // the slice is one key: it cannot be split
};

struct Map {
  std::string name;
  routing::MapKind kind = routing::MapKind::range;
  routing::KeyType bound_type = routing::KeyType::int8;  // int8 for hash maps
};

struct Mapping {
  std::string map;
  routing::KeyRange range;  // points: [k, successor)
  bool is_point = false;
  std::string shard;
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
  double load = 0;
  bool held = false;          // a live operation holds it: never moved, never split
  std::vector<Slice> slices;  // empty: the mapping can only move whole
};

struct Fleet {
  std::vector<Shard> shards;
  std::vector<Map> maps;
  std::vector<Mapping> mappings;
};

enum class Objective { size, load, both };

struct Options {
  Objective objective = Objective::size;
  std::optional<std::string> map;            // only this map's mappings change
  std::optional<int> max_moves;              // at most this many steps
  std::optional<std::int64_t> max_bytes;     // at most this many bytes moved in all
  std::vector<std::string> exclude_shards;   // neither give nor receive
  std::vector<std::string> drain_shards;     // give everything away, receive nothing
  double threshold = 0.05;                   // within this fraction of its target: balanced
  // A step must improve balance by at least this much per unit it moves. Unit: the reduction of
  // D = sum over shards of |objective - target| that the step achieves, divided by twice the
  // objective it moves (bytes for --objective size). A step that moves x from a shard at least x
  // above its target to one at least x below reduces D by 2x: ratio 1, the most a step can do.
  // A step that overshoots (the unit is bigger than the gap) scores less; 0 accepts any step
  // that reduces D at all, 0.5 (Citus' improvement_threshold) asks that at least half of what
  // moves closes the gap. Range [0, 1]; steps that fit inside the gap always pass.
  double min_improvement = 0.0;
  std::int64_t batch_bytes = 64'000'000;     // for the offline-window estimate: what split/merge/move batch by
  double copy_bytes_per_second = 50e6;       // for the offline-window estimate
};

enum class StepKind { split, move, merge };

struct Step {
  StepKind kind = StepKind::move;
  std::string map;
  std::string from;  // the shard giving the keys
  std::string to;    // the shard receiving them
  // The keys that change shard (bound type). For a split: one side of the mapping cut at `at`.
  routing::KeyRange range;
  std::optional<routing::Key> at;  // split: the cut
  bool move_upper = true;          // split: which side of the cut moves
  std::int64_t rows = 0;
  std::int64_t bytes = 0;
  double load = 0;
  int batches = 1;                        // estimated from batch_bytes
  double offline_seconds_per_batch = 0;   // estimated from copy_bytes_per_second
  // Indexes of earlier steps that share a shard with it: the latest earlier step on `from` and
  // the latest on `to` (at most two; the earlier ones on those shards precede them in turn, so
  // waiting for these waits for all of them).
  std::vector<std::size_t> after;
};

// One shard's size and load before and after the plan.
struct Balance {
  std::string shard;
  std::int64_t bytes_before = 0;
  std::int64_t bytes_after = 0;
  double load_before = 0;
  double load_after = 0;
  std::int64_t target_bytes = 0;  // what this shard should hold by its weight and capacity
};

struct Unsplittable {
  std::string map;
  routing::Key key;  // the hot key (bound type)
  std::string shard;
  std::int64_t bytes = 0;
  bool isolated = false;  // a step gives it a shard of its own
};

struct Plan {
  std::vector<Step> steps;
  std::vector<Balance> shards;
  std::vector<Unsplittable> unsplittable;
  std::vector<std::string> notes;  // why planning stopped: balanced, a limit, no improving step
  // Over the shards the plan balances (online, neither drained nor excluded): the largest ratio
  // of a shard's objective to its fair target (its share by weight, capped by capacity_bytes).
  // With equal weights and no binding capacity this is max / mean. 1 when they hold nothing.
  double imbalance_before = 0;
  double imbalance_after = 0;
  std::int64_t bytes_moved = 0;
  Objective objective = Objective::size;
  std::vector<Map> maps;  // the maps the steps and keys name: their key types, for the plan file
};

// Plans the steps. Throws a usage Error for options that name unknown shards or maps.
Plan plan(const Fleet& fleet, const Options& options);

// The fleet as it will be once every step of `plan` ran (mappings cut and moved). The property
// tests check that plan() predicted exactly this layout.
// Throws a data Error when a step names a mapping the fleet does not have.
Fleet apply_plan(const Fleet& fleet, const Plan& plan);

// Each shard's bytes and load (fixed part plus its mappings), in the order of fleet.shards.
struct Usage {
  std::int64_t bytes = 0;
  double load = 0;
};
std::vector<Usage> shard_usage(const Fleet& fleet);

// The words of the planner's enums, as plan and fleet files and the text output spell them: a
// contract (a plan written by one version is applied by the next), so spelled here once, one
// core/words.hpp table each. from_text<E> returns nothing for an unknown word (the caller says
// what was wrong and where); parse_word<Objective> is a usage Error naming the choices. A value out
// of range prints as it always has: ? for an objective or step kind, online for a status.
inline constexpr auto objective_words =
    words<Objective>({{Objective::size, "size"}, {Objective::load, "load"}, {Objective::both, "both"}})
        .otherwise("?")
        .named("objective");
inline constexpr auto step_kind_words =
    words<StepKind>({{StepKind::split, "split"}, {StepKind::move, "move"}, {StepKind::merge, "merge"}}).otherwise("?");
inline constexpr auto shard_status_words =
    words<ShardStatus>({{ShardStatus::online, "online"}, {ShardStatus::readonly, "readonly"}, {ShardStatus::offline, "offline"}})
        .otherwise("online");
constexpr const auto& words_of(Objective) noexcept { return objective_words; }
constexpr const auto& words_of(StepKind) noexcept { return step_kind_words; }
constexpr const auto& words_of(ShardStatus) noexcept { return shard_status_words; }
using shardctl::operator<<;
using shardctl::to_text;

// A split's moving side (Step::move_upper): upper | lower. (A bool, not an enum: words.cpp
// keeps its table and these two functions.)
std::string_view moving_side_name(bool move_upper) noexcept;
std::optional<bool> moving_side_named(std::string_view name);  // true: upper

}  // namespace shardctl::planner
