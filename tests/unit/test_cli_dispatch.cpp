#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
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

TEST_CASE("a built-in family is never listed as a plugin, whatever the search path holds") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("shardctl-dispatch-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* name : {"shardctl-alpha", "shardctl-extra"}) {
    std::ofstream(dir / name) << "#!/bin/sh\n";
    fs::permissions(dir / name, fs::perms::owner_all);
  }
  shardctl::cli::BuiltinFamilies builtins{{"alpha", "The alpha family"}, {"beta", "Not built here"}};
  auto found = shardctl::cli::discover_families(builtins, {dir});
  fs::remove_all(dir);
  REQUIRE(found.size() == 3);
  CHECK(found[0].name == "alpha");
  CHECK_FALSE(found[0].plugin);
  CHECK(found[0].description == "The alpha family");
  CHECK(found[0].path == dir / "shardctl-alpha");
  CHECK(found[1].name == "beta");
  CHECK_FALSE(found[1].plugin);
  CHECK(found[2].name == "extra");
  CHECK(found[2].plugin);
}
