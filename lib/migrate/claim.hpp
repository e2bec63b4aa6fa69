// The key ranges an operation plans with, without a database: the part of a mapping a split
// moves, the part of a mapping inside a merge's range, and a claim grown to cover another
// range. Half-open ranges; an absent bound is unbounded (routing/key.hpp).
#pragma once

#include "routing/key.hpp"

namespace shardctl::migrate {

// The side of `holder` that a split at `at` (inside it) moves: [at, high) for --move upper,
// [low, at) for --move lower.
routing::KeyRange split_side(const routing::KeyRange& holder, const routing::Key& at, bool move_upper);

// The keys of `range` that are also in `within` (the caller knows the two overlap).
routing::KeyRange part_within(const routing::KeyRange& range, const routing::KeyRange& within);

// The smallest range holding both: the lower low and the higher high, unbounded where either is.
routing::KeyRange span_of(const routing::KeyRange& a, const routing::KeyRange& b);

}  // namespace shardctl::migrate
