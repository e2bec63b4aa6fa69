#include "migrate/batch_plan.hpp"

#include <algorithm>

namespace shardctl::migrate {

bool starts_batch(std::int64_t rank, int batch_size) noexcept { return rank > 1 && (rank - 1) % batch_size == 0; }

std::vector<PlannedBatch> batches_at(std::size_t segment, const routing::KeyRange& range, const std::vector<BatchBound>& bounds,
                                     std::int64_t total) {
  std::vector<PlannedBatch> batches;
  std::optional<routing::Key> low = range.low;
  std::int64_t done = 0;  // keys in the batches so far
  for (const auto& b : bounds) {
    batches.push_back(PlannedBatch{segment, routing::KeyRange{low, b.key}, b.rank - 1 - done});
    done = b.rank - 1;
    low = b.key;
  }
  batches.push_back(PlannedBatch{segment, routing::KeyRange{low, range.high}, total - done});
  return batches;
}

int keys_per_batch(std::int64_t batch_bytes, std::uint64_t bytes, std::int64_t keys) noexcept {
  double per_key = keys > 0 ? static_cast<double>(bytes) / static_cast<double>(keys) : 1.0;
  return static_cast<int>(std::clamp(static_cast<double>(batch_bytes) / std::max(per_key, 1.0), 1.0, 1e9));
}

std::uint64_t room_needed(std::uint64_t bytes) noexcept { return bytes + bytes / 10; }

}  // namespace shardctl::migrate
