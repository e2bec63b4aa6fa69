#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "routing/hash_space.hpp"

using namespace shardctl::routing;

TEST_CASE("even hash ranges cover all of int64, contiguous and unbounded at both ends") {
  for (int n : {1, 2, 3, 4, 7, 64}) {
    auto r = even_hash_ranges(n);
    REQUIRE(r.size() == static_cast<std::size_t>(n));
    CHECK_FALSE(r.front().low.has_value());
    CHECK_FALSE(r.back().high.has_value());
    for (std::size_t i = 1; i < r.size(); ++i) {
      REQUIRE(r[i].low.has_value());
      REQUIRE(r[i - 1].high.has_value());
      CHECK(std::get<std::int64_t>(*r[i].low) == std::get<std::int64_t>(*r[i - 1].high));
      if (i > 1) CHECK(std::get<std::int64_t>(*r[i].low) > std::get<std::int64_t>(*r[i - 1].low));
    }
  }
  auto two = even_hash_ranges(2);
  CHECK(std::get<std::int64_t>(*two[0].high) == 0);
  auto four = even_hash_ranges(4);
  CHECK(std::get<std::int64_t>(*four[0].high) == std::numeric_limits<std::int64_t>::min() / 2);
  CHECK_THROWS_AS(even_hash_ranges(0), shardctl::Error);
}
