// What two copies of a reference table differ by (lib/refdata/diff.hpp): differing chunks,
// rows missing, extra or changed, and the majority copy (or a tie).
#include <doctest/doctest.h>

#include "refdata/diff.hpp"

using namespace shardctl::refdata;

TEST_CASE("differing_chunks: changed digests and chunks present on one side only") {
  ChunkDigests a{{0, {2, "10"}}, {1, {1, "5"}}, {3, {4, "7"}}};
  ChunkDigests b{{0, {2, "10"}}, {1, {1, "6"}}, {2, {1, "1"}}};
  CHECK(differing_chunks(a, b) == std::vector<std::int64_t>{1, 2, 3});
  CHECK(differing_chunks(a, a).empty());
  CHECK(differing_chunks({}, {}).empty());
}

TEST_CASE("differing_chunks: a count that differs with the same sum still differs") {
  CHECK(differing_chunks({{0, {2, "0"}}}, {{0, {3, "0"}}}) == std::vector<std::int64_t>{0});
}

TEST_CASE("classify by key: missing, extra and changed rows, sorted") {
  std::vector<RowHash> source{{"(1)", "a"}, {"(2)", "b"}, {"(3)", "c"}, {"(5)", "e"}};
  std::vector<RowHash> copy{{"(5)", "E"}, {"(1)", "a"}, {"(4)", "d"}, {"(3)", "c"}};
  auto d = classify(source, copy, false);
  CHECK(d.missing == std::vector<std::string>{"(2)"});
  CHECK(d.extra == std::vector<std::string>{"(4)"});
  CHECK(d.changed == std::vector<std::string>{"(5)"});
  CHECK(d.total() == 3);
}

TEST_CASE("classify by whole row: a multiset; a duplicate is extra, a changed row is one missing and one extra") {
  std::vector<RowHash> source{{"h1", "h1"}, {"h2", "h2"}};
  std::vector<RowHash> copy{{"h1", "h1"}, {"h1", "h1"}, {"h3", "h3"}};
  auto d = classify(source, copy, true);
  CHECK(d.missing == std::vector<std::string>{"h2"});
  CHECK(d.extra == std::vector<std::string>{"h1", "h3"});
  CHECK(d.changed.empty());
}

TEST_CASE("total: a copy's whole digest from its chunk digests, exact beyond 64 bits") {
  CHECK(total({}) == ChunkDigest{0, "0"});
  CHECK(total({{3, {2, "5"}}, {9, {3, "-7"}}}) == ChunkDigest{5, "-2"});
  CHECK(total({{0, {1, "-9223372036854775808"}}, {1, {1, "-9223372036854775808"}}}) == ChunkDigest{2, "-18446744073709551616"});
}

TEST_CASE("majority: the largest group of equal copies wins, by whole digests") {
  ChunkDigest good{1, "1"}, bad{1, "2"};
  auto m = majority({bad, good, good});
  CHECK_FALSE(m.tie);
  CHECK(m.winners() == std::vector<std::size_t>{1, 2});
  CHECK(m.groups.size() == 2);
  auto all = majority({good, good});
  CHECK_FALSE(all.tie);
  CHECK(all.groups.size() == 1);
}

TEST_CASE("majority: two groups of the largest size are a tie") {
  ChunkDigest a{1, "1"}, b{1, "2"}, c{2, "1"};
  CHECK(majority({a, b}).tie);
  CHECK(majority({a, b, b, a, c}).tie);
  CHECK_FALSE(majority({a, b, b, c}).tie);
}
