#include "planner/slices.hpp"

#include <cmath>

namespace shardctl::planner::detail {

namespace {

// Cumulative shares of `total` by the per-slice `weights` (uniform when they sum to zero).
std::vector<double> cumulative(const std::vector<double>& weights, double total) {
  double sum = 0;
  for (double w : weights) sum += w > 0 ? w : 0;
  std::vector<double> out(weights.size() + 1, 0.0);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    double share = sum > 0 ? (weights[i] > 0 ? weights[i] : 0) / sum : 1.0 / static_cast<double>(weights.size());
    out[i + 1] = out[i] + share;
  }
  for (double& v : out) v *= total;
  out.back() = total;
  return out;
}

std::vector<std::int64_t> rounded(const std::vector<double>& v, std::int64_t total) {
  std::vector<std::int64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = std::llround(v[i]);
  out.back() = total;
  // Keep it monotone whatever the rounding did.
  for (std::size_t i = 1; i < out.size(); ++i)
    if (out[i] < out[i - 1]) out[i] = out[i - 1];
  if (!out.empty() && out.back() != total) out.back() = total;
  return out;
}

}  // namespace

Prefix prefix_of(const Mapping& m) {
  std::vector<double> rows, bytes, load;
  for (const auto& s : m.slices) {
    rows.push_back(static_cast<double>(s.rows));
    bytes.push_back(static_cast<double>(s.bytes));
    load.push_back(s.load);
  }
  double load_sum = 0;
  for (double l : load) load_sum += l;
  if (load_sum <= 0) load = bytes;  // no per-key load: load follows the bytes
  Prefix p;
  p.rows = rounded(cumulative(rows, static_cast<double>(m.rows)), m.rows);
  p.bytes = rounded(cumulative(bytes, static_cast<double>(m.bytes)), m.bytes);
  p.load = cumulative(load, m.load);
  return p;
}

bool slices_usable(const Mapping& m, routing::KeyType type) {
  if (m.is_point || m.slices.size() < 2) return false;
  for (std::size_t i = 0; i < m.slices.size(); ++i) {
    const auto& low = m.slices[i].low;
    if (!routing::key_matches_type(type, low)) return false;
    if (i == 0) continue;
    if (routing::compare_keys(m.slices[i - 1].low, low) >= 0) return false;
    if (!routing::range_contains(m.range, low)) return false;
    if (m.range.low && routing::compare_keys(*m.range.low, low) >= 0) return false;
  }
  return true;
}

bool same_bound(const std::optional<routing::Key>& a, const std::optional<routing::Key>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || routing::compare_keys(*a, *b) == 0;
}

bool same_range(const routing::KeyRange& a, const routing::KeyRange& b) {
  return same_bound(a.low, b.low) && same_bound(a.high, b.high);
}

}  // namespace shardctl::planner::detail
