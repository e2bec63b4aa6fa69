#include "cli/dispatch.hpp"

#include <unistd.h>

#include <cstdlib>
#include <set>
#include <sstream>

namespace shardctl::cli {
namespace fs = std::filesystem;

const std::vector<std::pair<std::string, std::string>>& builtin_families() {
  static const std::vector<std::pair<std::string, std::string>> families = {
      {"init", "Create or upgrade the catalog schema (idempotent)"},
      {"sandbox", "Local throwaway PostgreSQL clusters with sample data"},
      {"shard", "Register, list, inspect and retire shard databases"},
      {"map", "Create, list, inspect and drop shard maps"},
      {"mapping", "Add, list and remove the points and ranges of a map"},
      {"lookup", "Route keys to shards (arguments, or a stream on stdin)"},
      {"table", "Declare sharded and reference tables"},
      {"xref", "Declare cross-shard references (child -> parent)"},
      {"split", "Split a mapping and move one side to another shard, batch by batch"},
      {"merge", "Move a key range onto one shard, batch by batch"},
      {"move", "Move one key (list maps) or one mapping to another shard"},
      {"op", "List, inspect, resume, cancel and wait for operations"},
      {"check", "Find orphaned references, strays and map inconsistencies; fix them on request"},
      {"archive", "Archive cold rows from every shard, verified and resumable; restore them"},
      {"schema", "Roll migrations out to every shard; version matrix, baseline, structural drift"},
      {"query", "Run a read-only query on every shard: one result with a shard column"},
  };
  return families;
}

namespace {

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::vector<fs::path> search_dirs(const fs::path& self_dir) {
  std::vector<fs::path> dirs{self_dir};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) dirs.emplace_back(dir);
  }
  return dirs;
}

}  // namespace

std::optional<fs::path> find_family(const std::string& name, const fs::path& self_dir) {
  if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
  for (const auto& dir : search_dirs(self_dir)) {
    fs::path candidate = dir / ("shardctl-" + name);
    if (is_executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::vector<FamilyEntry> discover_families(const fs::path& self_dir) {
  std::vector<FamilyEntry> out;
  std::set<std::string> seen;
  for (const auto& [name, description] : builtin_families()) {
    auto path = find_family(name, self_dir);
    out.push_back({name, description, path.value_or(fs::path{}), false});
    seen.insert(name);
  }
  for (const auto& dir : search_dirs(self_dir)) {
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
