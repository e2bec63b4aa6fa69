// The `shardctl` dispatcher: finds `shardctl-<family>` beside itself (a build tree), then in
// its libexec directory (an installed tree), then on PATH (git style, so third parties can
// add families), and runs it with the same arguments.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardctl::cli {

// The families built with the dispatcher: name and one-line summary, as each family's own
// cli::Family defines them. The dispatcher gets this table generated at build time
// (cmake/family_docs.cmake), never from a hand-kept list.
using BuiltinFamilies = std::vector<std::pair<std::string, std::string>>;

struct FamilyEntry {
  std::string name;
  std::string description;  // empty for plugins
  std::filesystem::path path;
  bool plugin = false;  // not built with this dispatcher: a shardctl-NAME found on the way
};

// Where families are looked for, in order: `self_dir`, then `libexec_dir`, then PATH.
std::vector<std::filesystem::path> search_dirs(const std::filesystem::path& self_dir,
                                               const std::filesystem::path& libexec_dir);

// The built-in families (in the table's order), then every other `shardctl-*` executable in
// `dirs` (a plugin; first found wins).
std::vector<FamilyEntry> discover_families(const BuiltinFamilies& builtins,
                                           const std::vector<std::filesystem::path>& dirs);

std::optional<std::filesystem::path> find_family(const std::string& name,
                                                 const std::vector<std::filesystem::path>& dirs);

// Splits leading global options (which may come before the family name) from the rest:
// returns the index of the family word in argv, or argc when there is none.
int family_index(int argc, char** argv);

}  // namespace shardctl::cli
