// Batch planning without a database: where a segment's batches start and end, given the
// distinct routing values its sources hold, and how many keys a batch takes when batches are
// sized in bytes. plan.cpp reads the key distribution and the sizes; this decides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "migrate/operation.hpp"
#include "routing/key.hpp"

namespace shardctl::migrate {

// A key that starts a batch, and its rank (1-based) among the segment's distinct routing
// values in key order.
struct BatchBound {
  routing::Key key;
  std::int64_t rank = 0;
};

// Whether the key at `rank` starts a batch of `batch_size` keys: every batch_size-th key after
// the first (rank 1 starts the first batch, whose low bound is the segment's own).
bool starts_batch(std::int64_t rank, int batch_size) noexcept;

// The segment's range cut at `bounds` (in key order, each with starts_batch true) into
// contiguous batches that cover it exactly, open ends included; `total` distinct keys in all.
// Each batch carries its count of distinct keys, the last one the remainder. A segment without
// keys is one batch of none.
std::vector<PlannedBatch> batches_at(std::size_t segment, const routing::KeyRange& range, const std::vector<BatchBound>& bounds,
                                     std::int64_t total);

// Keys per batch for batches of about `batch_bytes` when a segment's `keys` distinct keys take
// `bytes` on the source: at least 1 (a key bigger than a batch is a batch of its own), at most
// 10^9; a key of unknown size (no keys, or under a byte each) counts as one byte.
int keys_per_batch(std::int64_t batch_bytes, std::uint64_t bytes, std::int64_t keys) noexcept;

// The room a target needs for rows taking `bytes` on the sources: a tenth more, for the WAL
// and the index growth of the load.
std::uint64_t room_needed(std::uint64_t bytes) noexcept;

}  // namespace shardctl::migrate
