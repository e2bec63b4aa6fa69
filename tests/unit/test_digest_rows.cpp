// The COPY row digest: order-independent, split-independent, and sensitive to any changed,
// missing or extra row.
#include <doctest/doctest.h>

#include "digest/row_digest.hpp"

using shardctl::digest::RowDigest;

namespace {
RowDigest of(std::initializer_list<std::string_view> chunks) {
  RowDigest d;
  for (auto c : chunks) d.add(c);
  return d;
}
}  // namespace

TEST_CASE("the order of rows and how the stream is cut do not change the digest") {
  auto a = of({"1\tx\n", "2\ty\n", "3\tz\n"});
  auto b = of({"3\tz\n2\ty\n", "1\tx\n"});
  auto c = of({"2\t", "y\n1", "\tx\n3\tz", "\n"});
  CHECK(a.rows() == 3);
  CHECK(a.text() == b.text());
  CHECK(a.text() == c.text());
  CHECK(c.complete());
  CHECK(a.text().rfind("xxh3:", 0) == 0);
  CHECK(a.text().size() == 5 + 16);
}

TEST_CASE("a changed, missing, extra or swapped-field row changes the digest") {
  auto base = of({"1\tx\n2\ty\n"});
  CHECK(of({"1\tx\n2\tY\n"}).text() != base.text());
  CHECK(of({"1\tx\n"}).text() != base.text());
  CHECK(of({"1\tx\n2\ty\n2\ty\n"}).text() != base.text());
  CHECK(of({"1\ty\n2\tx\n"}).text() != base.text());
}

TEST_CASE("a stream that stops inside a row is incomplete and does not count the partial row") {
  auto d = of({"1\tx\n2\t"});
  CHECK(d.rows() == 1);
  CHECK_FALSE(d.complete());
  CHECK(of({}).text() == "xxh3:0000000000000000");
}
