// The planner against a Citus-style greedy rebalancer on small fleets shaped like the bench's
// (bench/rebalance_quality.cpp; bench/README.md, "rebalance planner quality and scale"): at the same threshold (0.1) a plan moves no
// more bytes than the greedy one and ends at least as balanced, or as balanced as any plan moving
// that few bytes can be. Each shape is a fleet where the
// planner used to fill shards to their target and so moved more than greedy, which stops as
// soon as every shard is within the threshold. A hot tenant is isolated: its plan moves exactly
// what isolation needs, nothing else.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "planner_fleets.hpp"

using namespace planner_test;
using shardctl::routing::KeyType;
using shardctl::routing::MapKind;

namespace {

struct Outcome {
  std::int64_t bytes = 0;
  double imbalance = 0;  // max / mean
};

double max_over_mean(const std::vector<double>& v) {
  double max = 0, sum = 0;
  for (double x : v) max = std::max(max, x), sum += x;
  return sum > 0 ? max / (sum / static_cast<double>(v.size())) : 1;
}

// The greedy rebalancer Citus documents, as bench/rebalance_quality.cpp has it: whole mappings,
// fullest shard (bytes / capacity) to emptiest, the first mapping whose move improves balance,
// while a shard is outside 10% of the mean; a move that leaves the receiver fuller than the
// giver must cut their difference by half the mapping's own utilization.
Outcome greedy(const Fleet& f) {
  const double threshold = 0.1, improvement_threshold = 0.5;
  std::size_t n = f.shards.size();
  std::vector<double> cap(n), cost(n, 0.0);
  std::vector<std::vector<double>> on(n);
  for (std::size_t i = 0; i < n; ++i)
    cap[i] = f.shards[i].capacity_bytes > 0 ? static_cast<double>(f.shards[i].capacity_bytes) : 1.0;
  for (const auto& m : f.mappings)
    for (std::size_t i = 0; i < n; ++i)
      if (f.shards[i].name == m.shard) on[i].push_back(static_cast<double>(m.bytes)), cost[i] += static_cast<double>(m.bytes);
  Outcome out;
  auto util = [&](std::size_t i) { return cost[i] / cap[i]; };
  for (bool moved = true; moved;) {
    moved = false;
    double total = 0, capacity = 0;
    for (std::size_t i = 0; i < n; ++i) total += cost[i], capacity += cap[i];
    double avg = total / capacity;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return util(a) > util(b); });
    for (std::size_t si = 0; si < n && !moved; ++si) {
      auto src = order[si];
      for (std::size_t ti = n; ti-- > si + 1 && !moved;) {
        auto dst = order[ti];
        if (util(src) <= avg * (1 + threshold) && util(dst) >= avg * (1 - threshold)) continue;
        for (std::size_t k = 0; k < on[src].size(); ++k) {
          double c = on[src][k];
          double new_src = (cost[src] - c) / cap[src], new_dst = (cost[dst] + c) / cap[dst];
          if (new_dst > util(src)) continue;
          if (new_dst > new_src) {
            double before = util(src) - util(dst), after = new_dst - new_src;
            if (after >= before || before - after < improvement_threshold * (c / cap[dst])) continue;
          }
          on[src].erase(on[src].begin() + static_cast<std::ptrdiff_t>(k));
          on[dst].push_back(c);
          cost[src] -= c;
          cost[dst] += c;
          out.bytes += static_cast<std::int64_t>(c);
          moved = true;
          break;
        }
      }
    }
  }
  out.imbalance = max_over_mean(cost);
  return out;
}

Outcome planned(const Fleet& f, const Plan& p) {
  std::vector<double> after;
  for (const auto& b : p.shards) after.push_back(static_cast<double>(b.bytes_after));
  auto usage = shard_usage(apply_plan(f, p));
  for (std::size_t i = 0; i < usage.size(); ++i) CHECK(usage[i].bytes == p.shards[i].bytes_after);
  return {p.bytes_moved, max_over_mean(after)};
}

// Shards s0.. of which the first `filled` hold ranges of 8 tenants (one histogram slice each,
// 5 000 to 15 000 bytes) until each holds `fill(shard)` bytes.
template <class Fill>
Fleet tenants(int shards, int filled, std::uint64_t seed, Fill fill) {
  Fleet f;
  f.maps.push_back({"tenants", MapKind::range, KeyType::int8});
  for (int s = 0; s < shards; ++s) f.shards.push_back(shard(name(s)));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> size(5000, 15000);
  std::int64_t key = 0;
  for (int s = 0; s < filled; ++s)
    for (std::int64_t have = 0; have < fill(s);) {
      Mapping m;
      m.map = "tenants";
      m.shard = name(s);
      m.range.low = Key{key};
      for (int t = 0; t < 8; ++t) {
        Slice slice;
        slice.low = Key{key++};
        slice.bytes = size(rng);
        slice.rows = slice.bytes / 100;
        slice.single_key = true;
        m.bytes += slice.bytes;
        m.rows += slice.rows;
        m.slices.push_back(slice);
      }
      m.range.high = Key{key};
      have += m.bytes;
      f.mappings.push_back(std::move(m));
    }
  return f;
}

Options threshold(double t) {
  Options o;
  o.threshold = t;
  return o;
}

}  // namespace

TEST_CASE("a new empty shard: no more bytes than greedy, at least as balanced") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    auto f = tenants(8, 7, seed, [](int) { return 1'500'000; });
    auto g = greedy(f);
    auto p = plan(f, threshold(0.1));
    REQUIRE_FALSE(p.steps.empty());  // each shape is unbalanced: the checks below are over its steps
    auto s = planned(f, p);
    CHECK(s.bytes <= g.bytes);
    CHECK(s.imbalance <= g.imbalance + 1e-9);
    CHECK(s.imbalance <= 1.05);
    for (const auto& st : p.steps) CHECK(st.to == "s7");
  }
}

TEST_CASE("three shards at 90% of capacity and one at 10%: fewer bytes than greedy, the best balance for them") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    const std::int64_t cap = 4'000'000;
    auto f = tenants(4, 4, seed, [&](int s) { return s < 3 ? cap * 9 / 10 : cap / 10; });
    for (auto& sh : f.shards) sh.capacity_bytes = cap;
    auto g = greedy(f);
    auto p = plan(f, threshold(0.1));
    REQUIRE_FALSE(p.steps.empty());  // each shape is unbalanced: the checks below are over its steps
    auto s = planned(f, p);
    CHECK(s.bytes <= g.bytes);
    CHECK(s.imbalance <= 1.05);
    for (const auto& b : p.shards) CHECK(b.bytes_after <= cap);
    // Greedy sometimes ends a little better balanced (by 0.003 at most on these seeds) by
    // overshooting: it moves 1-3% more. For the bytes the plan moves, none is better balanced:
    // the three givers end within one tenant (15 000 bytes) of each other, the receiver within
    // one tenant of the band's edge.
    auto givers = std::minmax({bytes_on(p, "s0"), bytes_on(p, "s1"), bytes_on(p, "s2")});
    CHECK(givers.second - givers.first <= 15000);
    double mean = 0;
    for (const auto& b : p.shards) mean += static_cast<double>(b.bytes_after) / 4;
    CHECK(static_cast<double>(bytes_on(p, "s3")) <= 0.9 * mean + 15000);
  }
}

TEST_CASE("a tenant bigger than the mean shard: isolated for exactly what isolation moves, better balanced than greedy") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    auto f = tenants(6, 6, seed, [](int) { return 1'000'000; });
    std::int64_t total = 0;
    for (const auto& m : f.mappings) total += m.bytes;
    auto& whale_range = f.mappings[3];  // on s0
    auto& whale = whale_range.slices[2];
    whale_range.bytes += total / 6 * 3 / 2 - whale.bytes;
    whale.bytes = total / 6 * 3 / 2;
    std::int64_t on_s0 = 0;
    for (const auto& m : f.mappings)
      if (m.shard == "s0") on_s0 += m.bytes;
    auto g = greedy(f);
    auto p = plan(f, threshold(0.1));
    REQUIRE_FALSE(p.steps.empty());  // each shape is unbalanced: the checks below are over its steps
    auto s = planned(f, p);
    REQUIRE(p.unsplittable.size() == 1);
    CHECK(p.unsplittable[0].isolated);
    // Isolation must move everything but the tenant off its shard; nothing else moves. Greedy
    // moves whole ranges, so the tenant's neighbours in its range stay with it: that is all it
    // saves, and the plan ends better balanced.
    CHECK(s.bytes == on_s0 - whale.bytes);
    CHECK(s.imbalance < g.imbalance);
    for (const auto& st : p.steps) CHECK(st.from == "s0");
  }
}
