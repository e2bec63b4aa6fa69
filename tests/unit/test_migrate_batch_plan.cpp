// Batch planning (migrate/batch_plan.hpp): which ranks of a segment's distinct keys start a
// batch, the batches cut at them (contiguous, covering the segment's range with its open ends,
// each counting the keys inside it), and batch sizes derived from bytes per key.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "migrate/batch_plan.hpp"

// Its own namespace: unit_tests is a unity build, and these helpers must not meet another file's.
namespace test_migrate_batch_plan {

namespace migrate = shardctl::migrate;
namespace routing = shardctl::routing;
using routing::Key;
using routing::KeyRange;

// The batches of a segment holding `keys` (distinct, in key order), as the planner's query and
// plan.cpp build them: the key at each rank that starts a batch becomes a bound.
std::vector<migrate::PlannedBatch> plan_over(const std::vector<Key>& keys, const KeyRange& range, int batch_size) {
  std::vector<migrate::BatchBound> bounds;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto rank = static_cast<std::int64_t>(i + 1);
    if (migrate::starts_batch(rank, batch_size)) bounds.push_back({keys[i], rank});
  }
  return migrate::batches_at(0, range, bounds, static_cast<std::int64_t>(keys.size()));
}

std::vector<Key> int_keys(std::vector<std::int64_t> values) {
  std::vector<Key> out;
  // emplace_back with the alternative named: GCC 12 at -O3 warns (falsely) that moving a
  // temporary Key may read its string alternative uninitialised.
  for (auto v : values) out.emplace_back(std::in_place_type<std::int64_t>, v);
  return out;
}

// The batches cover `range` exactly, each starting where the one before ends, and each counts
// the keys of `keys` that fall inside it.
void check_cover(const std::vector<migrate::PlannedBatch>& batches, const std::vector<Key>& keys, const KeyRange& range) {
  REQUIRE(!batches.empty());
  CHECK(batches.front().range.low == range.low);
  CHECK(batches.back().range.high == range.high);
  std::int64_t counted = 0;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (i + 1 < batches.size()) CHECK(batches[i].range.high == batches[i + 1].range.low);
    std::int64_t inside = 0;
    for (const auto& k : keys) inside += routing::range_contains(batches[i].range, k) ? 1 : 0;
    CHECK_MESSAGE(batches[i].keys == inside, "batch " << i << " " << routing::format_range(batches[i].range));
    counted += batches[i].keys;
  }
  CHECK(counted == static_cast<std::int64_t>(keys.size()));
}

TEST_CASE("a batch starts at every batch_size-th key after the first") {
  CHECK_FALSE(migrate::starts_batch(1, 1));  // the first key starts the first batch at the segment's own low
  CHECK(migrate::starts_batch(2, 1));
  CHECK(migrate::starts_batch(3, 1));
  for (std::int64_t rank : {1, 2, 3, 5, 6, 8})
    CHECK_FALSE(migrate::starts_batch(rank, 3));
  for (std::int64_t rank : {4, 7, 10})
    CHECK(migrate::starts_batch(rank, 3));
  CHECK_FALSE(migrate::starts_batch(1000, 1000));
  CHECK(migrate::starts_batch(1001, 1000));
}

TEST_CASE("a segment without keys is one batch of none over its whole range") {
  KeyRange bounded{Key{std::int64_t{10}}, Key{std::int64_t{20}}};
  auto b = plan_over({}, bounded, 5);
  REQUIRE(b.size() == 1);
  CHECK(b[0].keys == 0);
  check_cover(b, {}, bounded);

  KeyRange everything{};  // both ends unbounded
  b = plan_over({}, everything, 5);
  REQUIRE(b.size() == 1);
  CHECK_FALSE(b[0].range.low);
  CHECK_FALSE(b[0].range.high);
}

TEST_CASE("one key, or up to batch_size keys, is one batch") {
  KeyRange upper{Key{std::int64_t{100}}, std::nullopt};
  auto one = int_keys({150});
  auto b = plan_over(one, upper, 1);
  REQUIRE(b.size() == 1);
  CHECK(b[0].keys == 1);
  check_cover(b, one, upper);

  auto five = int_keys({100, 101, 140, 150, 999});
  b = plan_over(five, upper, 5);
  REQUIRE(b.size() == 1);
  CHECK(b[0].keys == 5);
  CHECK_FALSE(b[0].range.high);  // the open end stays open
}

TEST_CASE("one key past batch_size starts a batch of its own at that key") {
  KeyRange lower{std::nullopt, Key{std::int64_t{1000}}};
  auto keys = int_keys({1, 2, 3, 500});
  auto b = plan_over(keys, lower, 3);
  REQUIRE(b.size() == 2);
  CHECK(b[0].keys == 3);
  CHECK_FALSE(b[0].range.low);
  CHECK(b[0].range.high == Key{std::int64_t{500}});
  CHECK(b[1].keys == 1);
  CHECK(b[1].range.low == Key{std::int64_t{500}});
  CHECK(b[1].range.high == Key{std::int64_t{1000}});
}

TEST_CASE("sparse keys give batches of batch_size keys, the last the remainder") {
  std::vector<std::int64_t> values;
  for (std::int64_t v = -7000; v < 7000; v += 97) values.push_back(v);  // 145 keys, gaps of 97
  auto keys = int_keys(values);
  KeyRange all{};
  for (int size : {1, 2, 10, 144, 145, 146}) {
    CAPTURE(size);
    auto b = plan_over(keys, all, size);
    auto n = static_cast<std::int64_t>(keys.size());
    CHECK(static_cast<std::int64_t>(b.size()) == (n + size - 1) / size);
    for (std::size_t i = 0; i + 1 < b.size(); ++i) CHECK(b[i].keys == size);
    CHECK(b.back().keys == n - size * static_cast<std::int64_t>(b.size() - 1));
    check_cover(b, keys, all);
  }
}

TEST_CASE("a hash map's segment is cut at hash values, negative ones included") {
  // Hash maps route by a bigint hash of the key; the segment is a range of hashes.
  KeyRange hashes{Key{std::int64_t{-9'000'000'000'000'000'000}}, Key{std::int64_t{42}}};
  auto keys = int_keys({-8'000'000'000'000'000'000, -5, -3, 0, 7, 41});
  auto b = plan_over(keys, hashes, 4);
  REQUIRE(b.size() == 2);
  CHECK(b[1].range.low == Key{std::int64_t{7}});
  check_cover(b, keys, hashes);
}

TEST_CASE("text keys are cut at text bounds, in byte order") {
  std::vector<Key> keys{Key{std::string("Berlin")}, Key{std::string("Zagreb")}, Key{std::string("amsterdam")},
                        Key{std::string("berlin")}, Key{std::string("oslo")}};
  KeyRange range{Key{std::string("A")}, std::nullopt};
  auto b = plan_over(keys, range, 2);
  REQUIRE(b.size() == 3);
  CHECK(b[1].range.low == Key{std::string("amsterdam")});
  CHECK(b[2].range.low == Key{std::string("oslo")});
  check_cover(b, keys, range);
}

TEST_CASE("every batch carries its segment") {
  auto b = migrate::batches_at(3, KeyRange{}, {{Key{std::int64_t{5}}, 2}}, 2);
  REQUIRE(b.size() == 2);
  CHECK(b[0].segment == 3);
  CHECK(b[1].segment == 3);
}

TEST_CASE("batches sized in bytes take as many keys as fill a batch") {
  // 1000 keys taking 1 MB: 1000 bytes per key, 64 MB batches of 64000 keys.
  CHECK(migrate::keys_per_batch(64'000'000, 1'000'000, 1000) == 64'000);
  // Whole keys only: 300 bytes per key into 1000-byte batches.
  CHECK(migrate::keys_per_batch(1000, 900, 3) == 3);
  // A key bigger than a batch is a batch of its own.
  CHECK(migrate::keys_per_batch(64'000'000, 10'000'000'000, 10) == 1);
}

TEST_CASE("keys of unknown size count one byte each, and a batch holds at most 10^9 keys") {
  // No keys in the segment, or statistics that give its rows no bytes.
  CHECK(migrate::keys_per_batch(64'000'000, 0, 0) == 64'000'000);
  CHECK(migrate::keys_per_batch(64'000'000, 0, 500) == 64'000'000);
  CHECK(migrate::keys_per_batch(64'000'000, 100, 1000) == 64'000'000);  // a tenth of a byte per key
  CHECK(migrate::keys_per_batch(5'000'000'000, 0, 0) == 1'000'000'000);
}

TEST_CASE("a target needs a tenth more room than the rows take on the sources") {
  CHECK(migrate::room_needed(0) == 0);
  CHECK(migrate::room_needed(1'000'000) == 1'100'000);
  CHECK(migrate::room_needed(19) == 20);
}

}  // namespace test_migrate_batch_plan
