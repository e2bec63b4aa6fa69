// Equi-depth histograms: slices of about equal bytes, hot keys alone in single-key slices.
#include <doctest/doctest.h>

#include "stats/histogram.hpp"

using namespace shardctl;
using stats::KeyWeight;

namespace {
routing::Key k(std::int64_t v) { return routing::Key{v}; }
std::int64_t low_of(const stats::Slice& s) { return std::get<std::int64_t>(s.low); }
}  // namespace

TEST_CASE("equal keys merge, in key order") {
  std::vector<KeyWeight> keys{{k(5), 1, 10, 1}, {k(1), 2, 20, 0}, {k(5), 3, 30, 2}};
  stats::merge_equal_keys(keys);
  REQUIRE(keys.size() == 2);
  CHECK(std::get<std::int64_t>(keys[0].key) == 1);
  CHECK(keys[1].rows == 4);
  CHECK(keys[1].bytes == doctest::Approx(40));
  CHECK(keys[1].load == doctest::Approx(3));
}

TEST_CASE("uniform keys give slices of equal bytes that add up to the whole") {
  std::vector<KeyWeight> keys;
  for (int i = 0; i < 100; ++i) keys.push_back({k(i * 10), 1, 100, 0.5});
  auto slices = stats::equi_depth(keys, k(-50), 10);
  REQUIRE(slices.size() == 10);
  CHECK(low_of(slices[0]) == -50);  // the first slice starts at the mapping's low bound
  std::int64_t rows = 0, bytes = 0;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    CHECK(slices[i].bytes == 1000);
    CHECK_FALSE(slices[i].single_key);
    if (i > 0) CHECK(low_of(slices[i]) == static_cast<std::int64_t>(i) * 100);
    rows += slices[i].rows, bytes += slices[i].bytes;
  }
  CHECK(rows == 100);
  CHECK(bytes == 10000);
}

TEST_CASE("a key heavier than a slice gets a single-key slice") {
  std::vector<KeyWeight> keys;
  for (int i = 0; i < 20; ++i) keys.push_back({k(i), 1, 10, 0});
  keys[7].bytes = 5000;  // a hot tenant
  auto slices = stats::equi_depth(keys, std::nullopt, 8);
  int singles = 0;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (!slices[i].single_key) continue;
    ++singles;
    CHECK(low_of(slices[i]) == 7);
    CHECK(slices[i].bytes == 5000);
    REQUIRE(i + 1 < slices.size());
    CHECK(low_of(slices[i + 1]) == 8);  // the slice holds the one key
  }
  CHECK(singles == 1);
  CHECK(low_of(slices[0]) == 0);  // unbounded below: the smallest key
}

TEST_CASE("a hot first key keeps its slice one key when the mapping starts lower") {
  std::vector<KeyWeight> keys{{k(10), 1, 1000, 0}, {k(11), 1, 1, 0}, {k(12), 1, 1, 0}};
  auto slices = stats::equi_depth(keys, k(0), 4);
  REQUIRE(slices.size() == 3);
  CHECK(low_of(slices[0]) == 0);
  CHECK(slices[0].bytes == 0);
  CHECK(slices[1].single_key);
  CHECK(low_of(slices[1]) == 10);
}

TEST_CASE("no keys, no slices") { CHECK(stats::equi_depth({}, k(0), 4).empty()); }
