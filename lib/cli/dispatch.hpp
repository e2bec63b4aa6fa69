// The `shardctl` dispatcher: finds `shardctl-<family>` beside itself, then on PATH (git
// style, so third parties can add families), and runs it with the same arguments.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shardctl::cli {

struct FamilyEntry {
  std::string name;
  std::string description;  // empty for plugins found on PATH
  std::filesystem::path path;
  bool plugin = false;
};

// The built-in families with their one-line descriptions, in the order --help lists them.
const std::vector<std::pair<std::string, std::string>>& builtin_families();

// Every `shardctl-*` executable beside `self_dir` and on PATH (first found wins).
std::vector<FamilyEntry> discover_families(const std::filesystem::path& self_dir);

std::optional<std::filesystem::path> find_family(const std::string& name,
                                                 const std::filesystem::path& self_dir);

// Splits leading global options (which may come before the family name) from the rest:
// returns the index of the family word in argv, or argc when there is none.
int family_index(int argc, char** argv);

}  // namespace shardctl::cli
