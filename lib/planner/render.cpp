#include "planner/render.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace shardctl::planner {

std::string pretty_bytes(std::int64_t bytes) {
  static const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = static_cast<double>(bytes < 0 ? -bytes : bytes);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  std::string sign = bytes < 0 ? "-" : "";
  if (u == 0) return sign + fmt::format("{} B", static_cast<std::int64_t>(v));
  return sign + (v < 10 ? fmt::format("{:.1f} {}", v, units[u]) : fmt::format("{:.0f} {}", v, units[u]));
}

namespace {

constexpr int bar_width = 24;

// A bar of `value` against `scale`, with a '|' where the target falls.
std::string bar(double value, double target, double scale) {
  std::string s(bar_width, ' ');
  if (scale <= 0) return "[" + s + "]";
  int filled = static_cast<int>(std::lround(std::min(1.0, value / scale) * bar_width));
  for (int i = 0; i < filled; ++i) s[static_cast<std::size_t>(i)] = '#';
  if (target > 0) {
    int t = std::min(bar_width - 1, static_cast<int>(std::lround(target / scale * bar_width)));
    s[static_cast<std::size_t>(t)] = '|';
  }
  return "[" + s + "]";
}

std::string keys(const routing::KeyRange& r) { return routing::format_range(r); }

void print_steps(std::ostream& out, const std::vector<Step>& steps) {
  std::size_t wk = 4, wm = 3, ws = 4;
  for (const auto& s : steps) {
    wk = std::max(wk, keys(s.range).size());
    wm = std::max(wm, s.map.size());
    ws = std::max(ws, s.from.size() + s.to.size() + 4);
  }
  out << "\nSteps:\n";
  out << fmt::format("  {:>4}  {:<5}  {:<{}}  {:<{}}  {:<{}}  {:>9}  {:>10}  {:>7}  {:>13}  {}\n", "#", "kind", "map", wm,
                     "keys", wk, "from -> to", ws, "bytes", "rows", "batches", "offline/batch", "after");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    std::string after;
    for (auto a : s.after) after += (after.empty() ? "#" : ", #") + std::to_string(a + 1);
    std::string kind(to_text(s.kind));
    std::string cut =
        s.at ? " (cut at " + routing::format_key(*s.at) + ", " + std::string(moving_side_name(s.move_upper)) + " moves)" : "";
    out << fmt::format("  {:>4}  {:<5}  {:<{}}  {:<{}}  {:<{}}  {:>9}  {:>10}  {:>7}  {:>12.1f}s  {}{}\n", i + 1, kind, s.map,
                       wm, keys(s.range), wk, s.from + " -> " + s.to, ws, pretty_bytes(s.bytes), s.rows, s.batches,
                       s.offline_seconds_per_batch, after.empty() ? "-" : after, cut);
  }
}

void print_balances(std::ostream& out, const std::vector<Balance>& shards) {
  double max_bytes = 0, max_load = 0;
  std::size_t wn = 5;
  bool any_load = false;
  for (const auto& b : shards) {
    max_bytes = std::max({max_bytes, double(b.bytes_before), double(b.bytes_after), double(b.target_bytes)});
    max_load = std::max({max_load, b.load_before, b.load_after});
    any_load = any_load || b.load_before != 0 || b.load_after != 0;
    wn = std::max(wn, b.shard.size());
  }
  out << "\nShards (size before -> after; '|' marks the target):\n";
  for (const auto& b : shards) {
    out << fmt::format("  {:<{}}  size {} {:>8} -> {} {:>8}  target {}\n", b.shard, wn,
                       bar(double(b.bytes_before), double(b.target_bytes), max_bytes), pretty_bytes(b.bytes_before),
                       bar(double(b.bytes_after), double(b.target_bytes), max_bytes), pretty_bytes(b.bytes_after),
                       pretty_bytes(b.target_bytes));
    if (any_load)
      out << fmt::format("  {:<{}}  load {} {:>8.1f} -> {} {:>8.1f}\n", "", wn, bar(b.load_before, 0, max_load), b.load_before,
                         bar(b.load_after, 0, max_load), b.load_after);
  }
}

}  // namespace

void print_text(std::ostream& out, const Plan& plan) {
  out << fmt::format("Rebalance plan ({}): {} step{}, {} moved, imbalance {:.2f} -> {:.2f} (max/mean)\n",
                     to_text(plan.objective), plan.steps.size(), plan.steps.size() == 1 ? "" : "s",
                     pretty_bytes(plan.bytes_moved), plan.imbalance_before, plan.imbalance_after);
  if (!plan.steps.empty()) print_steps(out, plan.steps);
  if (!plan.shards.empty()) print_balances(out, plan.shards);
  if (!plan.unsplittable.empty()) {
    out << "\nToo big to move (a single key bigger than a shard's target):\n";
    for (const auto& u : plan.unsplittable)
      out << fmt::format("  map {} key {} on {}: {}, {}\n", u.map, routing::format_key(u.key), u.shard, pretty_bytes(u.bytes),
                         u.isolated ? "isolated on its shard" : "not isolated");
  }
  if (!plan.notes.empty()) {
    out << "\nNotes:\n";
    for (const auto& n : plan.notes) out << "  - " << n << "\n";
  }
}

}  // namespace shardctl::planner
