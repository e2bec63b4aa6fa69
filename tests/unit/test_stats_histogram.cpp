// Equi-depth histograms: slices of about equal live bytes (physical bytes carried along), hot
// keys alone in single-key slices.
#include <doctest/doctest.h>

#include "stats/histogram.hpp"

using namespace shardctl;
using stats::KeyWeight;

namespace {
routing::Key k(std::int64_t v) { return routing::Key{v}; }
std::int64_t low_of(const stats::Slice& s) { return std::get<std::int64_t>(s.low); }
}  // namespace

TEST_CASE("equal keys merge, in key order") {
  std::vector<KeyWeight> keys{{k(5), 1, 10, 1, 100}, {k(1), 2, 20, 0, 200}, {k(5), 3, 30, 2, 300}};
  stats::merge_equal_keys(keys);
  REQUIRE(keys.size() == 2);
  CHECK(std::get<std::int64_t>(keys[0].key) == 1);
  CHECK(keys[1].rows == 4);
  CHECK(keys[1].live_bytes == doctest::Approx(40));
  CHECK(keys[1].load == doctest::Approx(3));
  CHECK(keys[1].bytes == doctest::Approx(400));
}

TEST_CASE("uniform keys give slices of equal live bytes that add up to the whole") {
  std::vector<KeyWeight> keys;
  for (int i = 0; i < 100; ++i) keys.push_back({k(i * 10), 1, 100, 0.5, 300});
  auto slices = stats::equi_depth(keys, k(-50), 10);
  REQUIRE(slices.size() == 10);
  CHECK(low_of(slices[0]) == -50);  // the first slice starts at the mapping's low bound
  std::int64_t rows = 0, live = 0, bytes = 0;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    REQUIRE(slices[i].live_bytes);
    CHECK(*slices[i].live_bytes == 1000);
    CHECK(slices[i].bytes == 3000);
    CHECK_FALSE(slices[i].single_key);
    if (i > 0) CHECK(low_of(slices[i]) == static_cast<std::int64_t>(i) * 100);
    rows += slices[i].rows, live += *slices[i].live_bytes, bytes += slices[i].bytes;
  }
  CHECK(rows == 100);
  CHECK(live == 10000);
  CHECK(bytes == 30000);
}

TEST_CASE("slices divide live bytes, not physical ones: dead space in a key range does not cut it finer") {
  // Keys 0..49 lost most of their rows (physical 1000 each, live 10); keys 50..99 are full
  // (physical 1000, live 1000). Slices of equal physical bytes would put half the slices on the
  // emptied keys; by live bytes nearly all of them fall on the full ones.
  std::vector<KeyWeight> keys;
  for (int i = 0; i < 100; ++i) keys.push_back({k(i), 1, i < 50 ? 10.0 : 1000.0, 0, 1000});
  auto slices = stats::equi_depth(keys, k(0), 10);
  REQUIRE(slices.size() >= 8);
  std::size_t on_full = 0;
  for (const auto& sl : slices) on_full += low_of(sl) >= 50 ? 1 : 0;
  CHECK(on_full == slices.size() - 1);  // one slice holds every emptied key
}

TEST_CASE("a key heavier than a slice gets a single-key slice") {
  std::vector<KeyWeight> keys;
  for (int i = 0; i < 20; ++i) keys.push_back({k(i), 1, 10, 0, 10});
  keys[7].live_bytes = 5000;  // a hot tenant
  auto slices = stats::equi_depth(keys, std::nullopt, 8);
  int singles = 0;
  for (std::size_t i = 0; i < slices.size(); ++i) {
    if (!slices[i].single_key) continue;
    ++singles;
    CHECK(low_of(slices[i]) == 7);
    CHECK(slices[i].live_bytes == 5000);
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
  CHECK(slices[0].live_bytes == 0);
  CHECK(slices[1].single_key);
  CHECK(low_of(slices[1]) == 10);
}

TEST_CASE("no keys, no slices") { CHECK(stats::equi_depth({}, k(0), 4).empty()); }
