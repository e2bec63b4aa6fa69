// [shards.NAME] capacity_bytes and weight: what the rebalance planner reads about each shard.
#include <doctest/doctest.h>

#include "config/config.hpp"
#include "config_support.hpp"
#include "core/error.hpp"

using namespace shardctl;

TEST_CASE("shards tables give capacity and weight per shard name") {
  auto cfg = config::parse_config(
      "[shards.shard_1]\ncapacity_bytes = 1000000\nweight = 2.5\n\n[shards.\"big-one\"]\nweight = 3\n", "cfg.toml");
  REQUIRE(cfg.shards.size() == 2);
  const auto* s1 = cfg.shard("shard_1");
  REQUIRE(s1);
  CHECK(s1->capacity_bytes == 1000000);
  CHECK(s1->weight == doctest::Approx(2.5));
  const auto* big = cfg.shard("big-one");
  REQUIRE(big);
  CHECK_FALSE(big->capacity_bytes);
  CHECK(big->weight == doctest::Approx(3.0));
  CHECK(cfg.shard("shard_9") == nullptr);
}

TEST_CASE("shards tables refuse unknown keys and bad values at file:line:col") {
  CHECK(test::config_error_of("[shards.a]\ncapacity = 5\n") == "cfg.toml:2:1: unknown key \"shards.a.capacity\"");
  CHECK(test::config_error_of("[shards.a]\ncapacity_bytes = 0\n") == "cfg.toml:2:18: \"shards.a.capacity_bytes\" must be at least 1");
  CHECK(test::config_error_of("[shards.a]\nweight = -1.0\n") == "cfg.toml:2:10: \"shards.a.weight\" must be above 0");
  CHECK(test::config_error_of("[shards.a]\nweight = \"x\"\n").find("\"shards.a.weight\" must be a number, not a string") != std::string::npos);
  CHECK(test::config_error_of("[shards]\na = 3\n").find("\"shards.a\" must be a table") != std::string::npos);
}
