#include "routing/range_split.hpp"

#include <cstdint>

namespace shardctl::routing {

std::vector<KeyRange> split_key_range(KeyType type, const KeyRange& range, int parts) {
  bool integer = type == KeyType::int4 || type == KeyType::int8;
  if (!integer || parts < 2 || !range.low || !range.high) return {range};
  auto* lo = std::get_if<std::int64_t>(&*range.low);
  auto* hi = std::get_if<std::int64_t>(&*range.high);
  if (!lo || !hi || *hi <= *lo) return {range};
  // The width in unsigned arithmetic: a bigint range may span more than INT64_MAX keys.
  std::uint64_t width = static_cast<std::uint64_t>(*hi) - static_cast<std::uint64_t>(*lo);
  std::uint64_t n = static_cast<std::uint64_t>(parts) < width ? static_cast<std::uint64_t>(parts) : width;
  if (n < 2) return {range};
  std::uint64_t step = width / n, extra = width % n;  // the first `extra` parts get one more key
  std::vector<KeyRange> out;
  std::uint64_t at = static_cast<std::uint64_t>(*lo);
  for (std::uint64_t i = 0; i < n; ++i) {
    KeyRange part;
    part.low = Key{static_cast<std::int64_t>(at)};
    at += step + (i < extra ? 1 : 0);
    part.high = i + 1 == n ? *range.high : Key{static_cast<std::int64_t>(at)};
    out.push_back(std::move(part));
  }
  out.front().low = range.low;
  return out;
}

}  // namespace shardctl::routing
