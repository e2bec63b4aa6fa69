// What a binary says about itself: the version (CMake's project version) and the git commit
// it was built from. The commit is written at build time (cmake/build_info.cmake) into a
// generated source of its own, so a new commit recompiles one file, not every user.
#pragma once

#include <string>

namespace shardctl::cli {

// "0123456789ab", "0123456789ab-dirty" (uncommitted changes), or "unknown" (no git checkout).
const char* build_commit() noexcept;

// "shardctl 0.1.0 (commit 0123456789ab)": what --version prints, in every binary.
inline std::string version_line() {
  std::string line = "shardctl ";
  line += SHARDCTL_VERSION;
  line += " (commit ";
  line += build_commit();
  line += ")";
  return line;
}

}  // namespace shardctl::cli
