// Digests are exact sums over rows, so the digest of a set of rows can be assembled from the
// digests of its parts: the online cut-over (lib/migrate/cut_over_verify.hpp) journals the
// source's whole batch as D(rows outside K, in S) - D(rows of K' outside K, in T) + D(rows of K',
// now), where S and T hold the same rows outside the recorded keys K, K' contains K, and no row
// outside K' changed since. These properties check that arithmetic on random rows and key sets.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "shardio/value_digest.hpp"

using namespace shardctl::shardio;

namespace digest_arithmetic {

struct Row {
  int key;
  std::int64_t hash;  // the row's value hash, as the server sums it
};

std::string digest_of(const std::vector<Row>& rows, bool (*keep)(int, const std::set<int>&), const std::set<int>& keys) {
  ValueSum sum;
  for (const auto& r : rows)
    if (keep(r.key, keys)) sum.add(r.hash);
  return sum.text();
}
bool in_keys(int k, const std::set<int>& keys) { return keys.count(k) > 0; }
bool out_keys(int k, const std::set<int>& keys) { return keys.count(k) == 0; }
bool all_keys(int, const std::set<int>&) { return true; }

std::vector<Row> random_rows(int keys) {
  auto n = *rc::gen::inRange(0, 60);
  std::vector<Row> rows;
  for (int i = 0; i < n; ++i) rows.push_back({*rc::gen::inRange(0, keys), *rc::gen::arbitrary<std::int64_t>()});
  return rows;
}

}  // namespace digest_arithmetic

using namespace digest_arithmetic;

TEST_CASE("a digest minus the digest of a subset of its rows is the digest of the rest") {
  CHECK(subtract_value_digests("3:10", "1:4") == "2:6");
  CHECK(subtract_value_digests("2:-5", "2:-5") == "0:0");
  CHECK_THROWS_AS(subtract_value_digests("1:5", "2:5"), shardctl::Error);
  CHECK(rc::check([] {
    auto rows = random_rows(10);
    std::set<int> keys;
    for (int k = 0; k < 10; ++k)
      if (*rc::gen::arbitrary<bool>()) keys.insert(k);
    RC_ASSERT(subtract_value_digests(digest_of(rows, all_keys, keys), digest_of(rows, in_keys, keys)) == digest_of(rows, out_keys, keys));
    RC_ASSERT(add_value_digests(digest_of(rows, out_keys, keys), digest_of(rows, in_keys, keys)) == digest_of(rows, all_keys, keys));
  }));
}

TEST_CASE("the cut-over's three digests add up to the batch's digest now") {
  CHECK(rc::check([] {
    // S: the source when the batch was compared; T: the target then, equal to S outside K.
    auto source_then = random_rows(12);
    std::set<int> changed_before, changed_after;  // K, and the keys changed after T
    for (int k = 0; k < 12; ++k) {
      if (*rc::gen::inRange(0, 4) == 0) changed_before.insert(k);
      if (*rc::gen::inRange(0, 4) == 0) changed_after.insert(k);
    }
    std::vector<Row> target_then;
    for (const auto& r : source_then)
      if (!in_keys(r.key, changed_before)) target_then.push_back(r);
    for (const auto& r : random_rows(12))
      if (in_keys(r.key, changed_before)) target_then.push_back(r);  // K's rows differ at will
    std::set<int> recorded = changed_before;  // K'
    recorded.insert(changed_after.begin(), changed_after.end());
    // Now: outside K' the rows are T's (= S's outside K), K''s rows anything.
    std::vector<Row> now;
    for (const auto& r : target_then)
      if (!in_keys(r.key, recorded)) now.push_back(r);
    for (const auto& r : random_rows(12))
      if (in_keys(r.key, recorded)) now.push_back(r);
    std::set<int> since;  // K' and not K
    for (int k : recorded)
      if (!in_keys(k, changed_before)) since.insert(k);
    auto whole = add_value_digests(subtract_value_digests(digest_of(source_then, out_keys, changed_before), digest_of(target_then, in_keys, since)),
                                   digest_of(now, in_keys, recorded));
    RC_ASSERT(whole == digest_of(now, all_keys, recorded));
  }));
}
