// Where a purge splits over two source sessions (migrate/purge_split.hpp): the cost model's
// choices on the shapes moves have, and properties over random ones (rapidcheck).
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>

#include "migrate/purge_split.hpp"

using shardctl::migrate::purge_digest_cost;
using shardctl::migrate::purge_split_at;
using shardctl::migrate::PurgeStepSize;

namespace {

// The longer side of a split at k (k = size: one session deletes all, the digests beside).
double split_cost(const std::vector<PurgeStepSize>& steps, std::size_t k) {
  double all = 0, first = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    all += steps[i].rows;
    if (i < k) first += steps[i].rows;
  }
  if (k == steps.size()) return all;
  return std::max(first, purge_digest_cost * all + (all - first));
}

}  // namespace

TEST_CASE("the bench's three tables: order lines on the first session, orders and customers on the second") {
  // order_lines, orders, customers (children first), rows of one batch run each.
  CHECK(purge_split_at({{3'000'000, true}, {1'000'000, true}, {100'000, true}}) == 1);
}

TEST_CASE("one table, or a child too small to be worth a session, does not split") {
  CHECK(purge_split_at({}) == 0);
  CHECK(purge_split_at({{1000, true}}) == 1);
  // The second session would digest 10 rows' worth and delete them all but a few: longer.
  CHECK(purge_split_at({{1, true}, {1000, true}}) == 2);
}

TEST_CASE("two tables of a size split between them") {
  CHECK(purge_split_at({{1000, true}, {1000, true}}) == 1);
}

TEST_CASE("a table's runs stay on one session") {
  // Two runs of order_lines, then orders: the split may not fall between the runs.
  CHECK(purge_split_at({{1'500'000, true}, {1'500'000, false}, {1'000'000, true}}) == 2);
  // A single table in two runs never splits.
  CHECK(purge_split_at({{1000, true}, {1000, false}}) == 2);
}

TEST_CASE("the split, if any, starts a table and is the shortest, and shorter than no split") {
  CHECK(rc::check([] {
    auto n = *rc::gen::inRange<std::size_t>(0, 8);
    std::vector<PurgeStepSize> steps;
    for (std::size_t i = 0; i < n; ++i)
      steps.push_back({static_cast<double>(*rc::gen::inRange(0, 1'000'000)), i == 0 || *rc::gen::arbitrary<bool>()});
    std::size_t k = purge_split_at(steps);
    RC_ASSERT(k >= (n == 0 ? 0u : 1u));
    RC_ASSERT(k <= n);
    if (k == n) {
      for (std::size_t j = 1; j < n; ++j)
        if (steps[j].starts_table) RC_ASSERT(split_cost(steps, j) >= split_cost(steps, n));
      return;
    }
    RC_ASSERT(steps[k].starts_table);
    RC_ASSERT(split_cost(steps, k) < split_cost(steps, n));
    for (std::size_t j = 1; j < n; ++j)
      if (steps[j].starts_table) RC_ASSERT(split_cost(steps, k) <= split_cost(steps, j));
  }));
}
