// Running PostgreSQL's own programs (initdb, pg_ctl) for the sandbox, as an unprivileged user
// when shardctl runs as root (the server refuses to run as root).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shardctl::sandbox {

struct RunAs {
  std::string name;
  uid_t uid;
  gid_t gid;
};

// The user servers run as: nullopt when we are not root (run as ourselves); otherwise
// $SHARDCTL_SANDBOX_USER, else "postgres", else "nobody".
std::optional<RunAs> server_user();

struct ProcessResult {
  int exit_code;       // -1 when killed by a signal
  std::string output;  // stdout and stderr together
};

// Runs argv[0] with its arguments (no shell), waiting for it, as `as` when given.
ProcessResult run_process(const std::vector<std::string>& argv, const std::optional<RunAs>& as);

// Makes `dir` (and nothing above it) owned by `as`, and checks that `as` can reach it through
// every parent directory. Throws a usage Error with a hint otherwise.
void hand_over_directory(const std::filesystem::path& dir, const std::optional<RunAs>& as);

}  // namespace shardctl::sandbox
