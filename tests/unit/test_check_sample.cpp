// Samples keep the N smallest distinct keys seen, whatever the order they arrive in, so the
// output does not depend on scan or thread order.
#include <doctest/doctest.h>

#include "check/shard_sweep.hpp"

using shardctl::check::keep_sample;

TEST_CASE("keeps the smallest distinct keys, sorted") {
  std::vector<std::string> s;
  for (const char* k : {"5,1", "700,1", "10,2", "5,1", "3,9", "800,1"}) keep_sample(s, k, 3);
  CHECK(s == std::vector<std::string>{"10,2", "3,9", "5,1"});
}

TEST_CASE("a limit of zero keeps nothing; fewer keys than the limit keeps them all") {
  std::vector<std::string> none;
  keep_sample(none, "1", 0);
  CHECK(none.empty());
  std::vector<std::string> two;
  keep_sample(two, "b", 10);
  keep_sample(two, "a", 10);
  CHECK(two == std::vector<std::string>{"a", "b"});
}
