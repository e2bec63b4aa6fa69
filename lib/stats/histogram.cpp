#include "stats/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace shardctl::stats {

void merge_equal_keys(std::vector<KeyWeight>& keys) {
  std::sort(keys.begin(), keys.end(), [](const KeyWeight& a, const KeyWeight& b) { return routing::compare_keys(a.key, b.key) < 0; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (out > 0 && routing::compare_keys(keys[out - 1].key, keys[i].key) == 0) {
      keys[out - 1].rows += keys[i].rows;
      keys[out - 1].live_bytes += keys[i].live_bytes;
      keys[out - 1].load += keys[i].load;
      keys[out - 1].bytes += keys[i].bytes;
    } else {
      if (out != i) keys[out] = std::move(keys[i]);
      ++out;
    }
  }
  keys.resize(out);
}

std::vector<Slice> equi_depth(const std::vector<KeyWeight>& keys, const std::optional<routing::Key>& low, int slices) {
  std::vector<Slice> out;
  if (keys.empty() || slices < 1) return out;
  double total = 0;
  for (const auto& k : keys) total += k.live_bytes;
  const double per_slice = total / slices;
  Slice cur;
  double cur_live = 0, cur_bytes = 0;
  bool open = false;
  auto close = [&] {
    if (!open) return;
    cur.bytes = static_cast<std::int64_t>(std::llround(cur_bytes));
    cur.live_bytes = static_cast<std::int64_t>(std::llround(cur_live));
    out.push_back(std::move(cur));
    cur = Slice{};
    cur_live = cur_bytes = 0;
    open = false;
  };
  for (const auto& k : keys) {
    bool heavy = per_slice > 0 && k.live_bytes >= per_slice && keys.size() > 1;
    if (heavy) {
      close();
      out.push_back(Slice{k.key, k.rows, static_cast<std::int64_t>(std::llround(k.bytes)), k.load, true,
                          static_cast<std::int64_t>(std::llround(k.live_bytes))});
      continue;
    }
    if (!open) {
      cur.low = k.key;
      open = true;
    }
    cur.rows += k.rows;
    cur_live += k.live_bytes;
    cur_bytes += k.bytes;
    cur.load += k.load;
    if (cur_live >= per_slice) close();
  }
  close();
  // The first slice covers the mapping from its low bound, so the slices tile the mapping.
  if (low && !out.empty() && routing::compare_keys(*low, out.front().low) < 0) {
    if (out.front().single_key) {
      // Keep the hot key's slice exactly one key: an empty slice covers the keys before it.
      out.insert(out.begin(), Slice{*low, 0, 0, 0, false, 0});
    } else {
      out.front().low = *low;
    }
  }
  return out;
}

}  // namespace shardctl::stats
