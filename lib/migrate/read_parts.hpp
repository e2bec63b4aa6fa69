// How the verify cuts a table's read-back of a batch on the target into parts that several
// connections read at once (--parallel), without a database: how many parts to ask for, and
// the parts of the batch's key range. verify.cpp reads the keys an open side needs.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "routing/key.hpp"

namespace shardctl::migrate {

// Parts of about this many rows at least: below it, another statement costs more than it saves.
inline constexpr std::int64_t rows_per_read_part = 500;

// The parts to read a table's `rows` rows of a batch in: more than the `parallel` readers,
// since keys need not be spread evenly, and one (the whole range) with one reader, for a table
// copied as text, or on a hash map (its filter hashes every row's key, so each part would
// scan the whole batch again).
int read_parts(int parallel, std::int64_t rows, bool binary, routing::MapKind kind) noexcept;

// Whether cutting `range` needs the lowest and highest key the target holds in it: an integer
// range with an open side (the first or last batch of a map).
bool cut_needs_held_keys(routing::KeyType bound_type, const routing::KeyRange& range) noexcept;

// `range` cut into up to `parts` contiguous parts that cover it exactly, open sides included,
// by key value (routing::split_key_range). An open side is cut between the keys the target
// holds there (`held`: lowest, highest); the range is returned whole when its keys are not
// integers, when an open side's target holds no key, or when the highest held key has no
// successor.
std::vector<routing::KeyRange> cut_for_reads(routing::KeyType bound_type, const routing::KeyRange& range, int parts,
                                             const std::optional<std::pair<routing::Key, routing::Key>>& held);

}  // namespace shardctl::migrate
