// --max-bytes sizes: binary units however written.
#include <doctest/doctest.h>

#include "rebalance/byte_size.hpp"

using shardctl::rebalance::parse_byte_size;

TEST_CASE("byte sizes") {
  CHECK(parse_byte_size("123") == 123);
  CHECK(parse_byte_size("2k") == 2048);
  CHECK(parse_byte_size("500M") == 500ll << 20);
  CHECK(parse_byte_size("10GB") == 10ll << 30);
  CHECK(parse_byte_size("1.5TiB") == (3ll << 40) / 2);
  CHECK_FALSE(parse_byte_size(""));
  CHECK_FALSE(parse_byte_size("-5"));
  CHECK_FALSE(parse_byte_size("5X"));
  CHECK_FALSE(parse_byte_size("GB"));
}
