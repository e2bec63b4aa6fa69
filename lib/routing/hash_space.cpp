#include "routing/hash_space.hpp"

#include <cstdint>
#include <limits>

#include "core/error.hpp"

namespace shardctl::routing {

std::vector<KeyRange> even_hash_ranges(int n) {
  if (n < 1) throw usage_error("a hash map needs at least one bucket");
  std::vector<KeyRange> out;
  // Work in unsigned space [0, 2^64) and shift back, so the arithmetic cannot overflow.
  const unsigned __int128 span = static_cast<unsigned __int128>(1) << 64;
  std::optional<Key> low;
  for (int i = 1; i <= n; ++i) {
    KeyRange r;
    r.low = low;
    if (i < n) {
      auto boundary = static_cast<std::uint64_t>(span * static_cast<unsigned>(i) / static_cast<unsigned>(n));
      auto value = static_cast<std::int64_t>(boundary ^ (std::uint64_t{1} << 63));
      r.high = Key{value};
      low = Key{value};
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace shardctl::routing
