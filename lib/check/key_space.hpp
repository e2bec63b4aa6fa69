// Coverage of a map's key space by its ranges: what no mapping covers and which mappings
// overlap. Pure code over routing::KeyRange, so it is tested without a database.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "routing/key.hpp"

namespace shardctl::check {

// The pieces of the key space of `bound_type` that no range covers, in key order. For a hash
// map pass bigint: its key space is every signed 64-bit hash value. A range starting at the
// smallest value of the type (INT32_MIN, INT64_MIN, '', the nil uuid) counts as unbounded
// below. An empty `ranges` leaves the whole space unmapped.
std::vector<routing::KeyRange> unmapped_ranges(routing::KeyType bound_type, std::vector<routing::KeyRange> ranges);

// Index pairs (i, j), i < j in input order, of ranges that overlap (each pair once).
std::vector<std::pair<std::size_t, std::size_t>> overlapping_pairs(const std::vector<routing::KeyRange>& ranges);

}  // namespace shardctl::check
