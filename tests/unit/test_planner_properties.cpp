// Properties of plan() on random fleets (rapidcheck): limits and exclusions hold, balance never
// gets worse, apply_plan reproduces the predicted layout, and no key range moves twice.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <set>

#include "planner_fleets.hpp"

using namespace planner_test;
using shardctl::routing::compare_keys;
using shardctl::routing::KeyType;
using shardctl::routing::MapKind;
using shardctl::routing::ranges_overlap;

namespace {

struct Case {
  Fleet fleet;
  Options options;
};

// 2-8 shards (some readonly or offline, some weighted or capped), 1-40 contiguous bigint
// ranges with 0-6 histogram slices (some a single hot key), some held; random options.
Case random_case() {
  Case c;
  auto& f = c.fleet;
  f.maps.push_back({"m", MapKind::range, KeyType::int8});
  f.maps.push_back({"n", MapKind::range, KeyType::int8});
  int shards = *rc::gen::inRange(2, 9);
  for (int s = 0; s < shards; ++s) {
    auto sh = shard(name(s));
    int status = *rc::gen::inRange(0, 10);
    sh.status = status == 0 ? "readonly" : status == 1 ? "offline" : "online";
    if (*rc::gen::inRange(0, 4) == 0) sh.weight = *rc::gen::inRange(1, 4);
    if (*rc::gen::inRange(0, 5) == 0) sh.capacity_bytes = *rc::gen::inRange(20000, 200000);
    sh.fixed_bytes = *rc::gen::inRange(0, 2000);
    f.shards.push_back(sh);
  }
  int mappings = *rc::gen::inRange(1, 41);
  std::int64_t key = *rc::gen::inRange(-5000, 5000);
  for (int i = 0; i < mappings; ++i) {
    std::int64_t width = *rc::gen::inRange(1, 400);
    int slices = *rc::gen::inRange(0, 7);
    if (slices > width) slices = static_cast<int>(width);
    auto m = range_mapping(*rc::gen::inRange(0, 5) == 0 ? "n" : "m", key, key + width,
                           name(*rc::gen::inRange(0, shards)), 0, slices, 0);
    key += width;
    m.bytes = 0;
    m.load = 0;
    for (auto& s : m.slices) {
      s.bytes = *rc::gen::inRange(0, 20000);
      s.load = *rc::gen::inRange(0, 100);
      s.single_key = *rc::gen::inRange(0, 8) == 0;
      m.bytes += s.bytes;
      m.load += s.load;
    }
    if (m.slices.empty()) {
      m.bytes = *rc::gen::inRange(0, 30000);
      m.load = *rc::gen::inRange(0, 100);
    }
    m.rows = m.bytes / 50;
    m.held = *rc::gen::inRange(0, 10) == 0;
    f.mappings.push_back(m);
  }
  auto& o = c.options;
  o.objective = static_cast<Objective>(*rc::gen::inRange(0, 3));
  for (int s = 0; s < shards; ++s) {
    int pick = *rc::gen::inRange(0, 8);
    if (pick == 0) o.exclude_shards.push_back(name(s));
    else if (pick == 1 && f.shards[static_cast<std::size_t>(s)].status != "offline") o.drain_shards.push_back(name(s));
  }
  if (*rc::gen::inRange(0, 3) == 0) o.max_moves = *rc::gen::inRange(0, 10);
  if (*rc::gen::inRange(0, 3) == 0) o.max_bytes = *rc::gen::inRange(0, 100000);
  if (*rc::gen::inRange(0, 4) == 0) o.map = "m";
  o.threshold = *rc::gen::element(0.0, 0.02, 0.05, 0.1);
  o.min_improvement = *rc::gen::element(0.0, 0.3, 0.5, 1.0);
  return c;
}

bool in(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

}  // namespace

TEST_CASE("no step touches an excluded shard or targets one that may not receive") {
  CHECK(rc::check([] {
    auto c = random_case();
    auto p = plan(c.fleet, c.options);
    for (const auto& s : p.steps) {
      RC_ASSERT(!in(c.options.exclude_shards, s.from));
      RC_ASSERT(!in(c.options.exclude_shards, s.to));
      RC_ASSERT(!in(c.options.drain_shards, s.to));
      for (const auto& sh : c.fleet.shards)
        if (sh.name == s.to) RC_ASSERT(sh.status == "online");
      if (c.options.map) RC_ASSERT(s.map == *c.options.map);
    }
  }));
}

TEST_CASE("limits hold: bytes moved, number of steps") {
  CHECK(rc::check([] {
    auto c = random_case();
    auto p = plan(c.fleet, c.options);
    std::int64_t sum = 0;
    for (const auto& s : p.steps) sum += s.bytes;
    RC_ASSERT(sum == p.bytes_moved);
    if (c.options.max_bytes) RC_ASSERT(p.bytes_moved <= *c.options.max_bytes);
    if (c.options.max_moves) RC_ASSERT(static_cast<int>(p.steps.size()) <= *c.options.max_moves);
    for (const auto& sh : c.fleet.shards)
      if (sh.capacity_bytes > 0)
        for (const auto& b : p.shards)
          if (b.shard == sh.name) RC_ASSERT(b.bytes_after <= std::max(b.bytes_before, sh.capacity_bytes));
  }));
}

TEST_CASE("the final imbalance is no worse than the initial one (no drains)") {
  CHECK(rc::check([] {
    auto c = random_case();
    c.options.drain_shards.clear();
    auto p = plan(c.fleet, c.options);
    RC_ASSERT(p.imbalance_after <= p.imbalance_before * (1 + 1e-9) + 1e-12);
  }));
}

TEST_CASE("apply_plan reproduces the predicted balance") {
  CHECK(rc::check([] {
    auto c = random_case();
    auto p = plan(c.fleet, c.options);
    auto after = apply_plan(c.fleet, p);
    auto usage = shard_usage(after);
    RC_ASSERT(usage.size() == p.shards.size());
    for (std::size_t i = 0; i < usage.size(); ++i) {
      RC_ASSERT(usage[i].bytes == p.shards[i].bytes_after);
      RC_ASSERT(std::abs(usage[i].load - p.shards[i].load_after) <= 1e-6 * (1 + std::abs(usage[i].load)));
    }
    // The predicted layout is a partition of the same key space: every mapping's rows and bytes
    // are accounted for once.
    std::int64_t before = 0, later = 0;
    for (const auto& m : c.fleet.mappings) before += m.bytes;
    for (const auto& m : after.mappings) {
      later += m.bytes;
      RC_ASSERT(m.bytes >= 0);
      RC_ASSERT(m.rows >= 0);
    }
    RC_ASSERT(before == later);
  }));
}

TEST_CASE("no key range moves twice and held mappings never move") {
  CHECK(rc::check([] {
    auto c = random_case();
    auto p = plan(c.fleet, c.options);
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
      for (std::size_t j = i + 1; j < p.steps.size(); ++j)
        if (p.steps[i].map == p.steps[j].map) RC_ASSERT(!ranges_overlap(p.steps[i].range, p.steps[j].range));
      for (const auto& m : c.fleet.mappings)
        if (m.held && m.map == p.steps[i].map) RC_ASSERT(!ranges_overlap(m.range, p.steps[i].range));
      for (auto a : p.steps[i].after) RC_ASSERT(a < i);
    }
  }));
}

TEST_CASE("a hot key never moves once it is reported isolated") {
  CHECK(rc::check([] {
    auto c = random_case();
    auto p = plan(c.fleet, c.options);
    for (const auto& u : p.unsplittable) {
      if (!u.isolated) continue;
      for (const auto& s : p.steps)
        if (s.map == u.map) RC_ASSERT(!shardctl::routing::range_contains(s.range, u.key));
    }
  }));
}
