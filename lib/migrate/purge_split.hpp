// Where a purge splits over two source sessions (purge.cpp), without a database: the first
// session deletes a prefix of the purge's steps (children first, so its commit, which comes
// first, leaves no orphan), the second takes the digests of every step and then deletes the
// rest. Both run at once, so the purge lasts about as long as the longer side.
#pragma once

#include <cstddef>
#include <vector>

namespace shardctl::migrate {

// One step of the purge: a table's rows in one run of batches.
struct PurgeStepSize {
  double rows = 0;           // the rows it deletes (as the flips journaled them)
  bool starts_table = true;  // false: the same table as the step before (a table stays on one session)
};

// A digest's cost per row, relative to a DELETE's (bench/README.md, "moves on a scattered
// heap": order_lines 0.49 s against 2.65 s, orders 0.19 s against 1.05 s).
inline constexpr double purge_digest_cost = 0.2;

// The first step the second session deletes, a step that starts a table, chosen so that the
// longer side (the first session's rows; the second's digests of all rows and its own rows)
// is shortest; steps.size() when no split is shorter than one session deleting every row
// beside the digests.
std::size_t purge_split_at(const std::vector<PurgeStepSize>& steps, double digest_cost = purge_digest_cost);

}  // namespace shardctl::migrate
