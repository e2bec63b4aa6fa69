// Equi-depth key histograms: pure code. A mapping's keys, each with its rows, bytes and load,
// become slices of about equal live bytes, so the planner can split a range at the key that
// divides it by size. A key heavier than a slice gets a slice of its own, marked single_key: a hot
// tenant the planner must move whole.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "stats/snapshot.hpp"

namespace shardctl::stats {

struct KeyWeight {
  routing::Key key;
  std::int64_t rows = 0;
  double live_bytes = 0;  // what the key's rows occupy: slices are equal in these
  double load = 0;
  double bytes = 0;       // physical: their tables' size apportioned by rows
};

// Sorts `keys` (bound-type order) and adds up the entries of equal keys.
void merge_equal_keys(std::vector<KeyWeight>& keys);

// Slices of `keys` (sorted, distinct), about `slices` of them. The first slice starts at
// `low` when the mapping's range is bounded below, else at the smallest key.
std::vector<Slice> equi_depth(const std::vector<KeyWeight>& keys, const std::optional<routing::Key>& low, int slices);

}  // namespace shardctl::stats
