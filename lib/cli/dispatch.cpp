#include "cli/dispatch.hpp"

#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>

namespace shardctl::cli {
namespace fs = std::filesystem;

namespace {

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::vector<fs::path> search_dirs(const fs::path& self_dir, const fs::path& libexec_dir) {
  std::vector<fs::path> dirs{self_dir, libexec_dir};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) dirs.emplace_back(dir);
  }
  return dirs;
}

std::optional<fs::path> find_family(const std::string& name, const std::vector<fs::path>& dirs) {
  if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
  for (const auto& dir : dirs) {
    fs::path candidate = dir / ("shardctl-" + name);
    if (is_executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::vector<FamilyEntry> discover_families(const BuiltinFamilies& builtins, const std::vector<fs::path>& dirs) {
  std::vector<FamilyEntry> out;
  std::set<std::string> seen;
  for (const auto& [name, description] : builtins) {
    auto path = find_family(name, dirs);
    out.push_back({name, description, path.value_or(fs::path{}), false});
    seen.insert(name);
  }
  for (const auto& dir : dirs) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::string file = entry.path().filename().string();
      if (file.rfind("shardctl-", 0) != 0) continue;
      std::string name = file.substr(9);
      if (name.empty() || seen.count(name) || !is_executable(entry.path())) continue;
      seen.insert(name);
      out.push_back({name, "", entry.path(), true});
    }
  }
  return out;
}

int family_index(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-c" || a == "--config" || a == "--catalog" || a == "--format") {
      ++i;  // skip the value
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    return i;
  }
  return argc;
}

}  // namespace shardctl::cli
