#include <doctest/doctest.h>

#include <vector>

#include "cli/dispatch.hpp"

using shardctl::cli::family_index;

namespace {
int index_of(std::vector<const char*> args) {
  return family_index(static_cast<int>(args.size()), const_cast<char**>(args.data()));
}
}  // namespace

TEST_CASE("the family word is found after leading global options") {
  CHECK(index_of({"shardctl", "shard", "list"}) == 1);
  CHECK(index_of({"shardctl", "--format", "json", "shard", "list"}) == 3);
  CHECK(index_of({"shardctl", "-c", "x.toml", "-q", "map"}) == 4);
  CHECK(index_of({"shardctl", "--catalog", "dbname=x", "--dry-run", "init"}) == 4);
  CHECK(index_of({"shardctl", "--help"}) == 2);
  CHECK(index_of({"shardctl"}) == 1);
}

TEST_CASE("builtin families are listed once each") {
  const auto& f = shardctl::cli::builtin_families();
  CHECK(f.size() >= 8);
  for (std::size_t i = 0; i < f.size(); ++i)
    for (std::size_t j = i + 1; j < f.size(); ++j) CHECK(f[i].first != f[j].first);
}
