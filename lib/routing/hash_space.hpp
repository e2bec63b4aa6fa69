// The hash key space of hash maps: signed 64-bit hash values, split into virtual buckets.
#pragma once

#include <vector>

#include "routing/key.hpp"

namespace shardctl::routing {

// `n` contiguous ranges of (almost) equal width covering all of int64, first and last
// unbounded so that every hash value is covered. Throws a usage Error for n < 1.
std::vector<KeyRange> even_hash_ranges(int n);

}  // namespace shardctl::routing
