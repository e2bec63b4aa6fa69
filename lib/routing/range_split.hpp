// Cutting a half-open key range into contiguous parts, so that several connections can each
// read one part of a batch at once (the verify's parallel read-back). Pure arithmetic on the
// bound values: it splits integer ranges (int and bigint keys of range maps) evenly by key
// value, not by rows, so callers cut into more parts than they have connections.
#pragma once

#include <vector>

#include "routing/key.hpp"

namespace shardctl::routing {

// At most `parts` contiguous, disjoint, non-empty ranges whose union is exactly `range`, in
// key order. Returns {range} unchanged when it cannot be cut by arithmetic: a text or uuid
// type, an unbounded side, fewer than two keys, or parts < 2.
std::vector<KeyRange> split_key_range(KeyType type, const KeyRange& range, int parts);

}  // namespace shardctl::routing
