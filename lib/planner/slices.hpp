// Internal to lib/planner: how a mapping's slices divide its rows, bytes and load, shared by
// plan() and apply_plan() so that both cut a mapping into exactly the same numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/planner.hpp"

namespace shardctl::planner::detail {

// Cumulative rows, bytes and load of a mapping's slices, scaled so that the last entry equals
// the mapping's own totals exactly (histograms are estimates; the mapping's totals are what
// the shard sizes add up). Entry i covers slices [0, i); there are slices.size() + 1 entries.
struct Prefix {
  std::vector<std::int64_t> rows;
  std::vector<std::int64_t> bytes;
  std::vector<double> load;
};
Prefix prefix_of(const Mapping& mapping);

// True when the slices can be used to cut the mapping: keys of the bound type, strictly
// increasing, every cut strictly inside the mapping's range.
bool slices_usable(const Mapping& mapping, routing::KeyType bound_type);

bool same_bound(const std::optional<routing::Key>& a, const std::optional<routing::Key>& b);
bool same_range(const routing::KeyRange& a, const routing::KeyRange& b);

}  // namespace shardctl::planner::detail
