#include "sandbox/pg_binaries.hpp"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "core/error.hpp"

namespace shardctl::sandbox {
namespace fs = std::filesystem;

namespace {
bool has_server(const fs::path& dir) {
  return access((dir / "initdb").c_str(), X_OK) == 0 && access((dir / "pg_ctl").c_str(), X_OK) == 0;
}
}  // namespace

fs::path find_pg_bindir() {
  if (const char* d = std::getenv("SHARDCTL_PG_BINDIR"); d && *d) {
    if (has_server(d)) return d;
    throw unavailable_error(std::string("SHARDCTL_PG_BINDIR=") + d + " holds no initdb and pg_ctl");
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty() && has_server(dir)) return dir;
  }
  fs::path best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    int version = std::atoi(entry.path().filename().c_str());
    if (version > best_version && has_server(entry.path() / "bin")) {
      best_version = version;
      best = entry.path() / "bin";
    }
  }
  if (best_version >= 0) return best;
  throw unavailable_error("no PostgreSQL server programs (initdb, pg_ctl) found",
                          "install them (Debian: apt-get install postgresql-15) or set SHARDCTL_PG_BINDIR");
}

}  // namespace shardctl::sandbox
