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

// Whether `as` may search `dir`: asked of the kernel by a child process running as `as` (so
// ACLs and group membership count as they will for the server), not guessed from mode bits.
bool can_search(const std::filesystem::path& dir, const RunAs& as);

// Makes `path` (a directory or file shardctl created, and nothing above it) owned by `as`, and
// checks that `as` can reach it through every parent directory. Throws a usage Error with a
// hint otherwise.
void hand_over_directory(const std::filesystem::path& path, const std::optional<RunAs>& as);

// Creates `dir` mode 0700 owned by `as` in a shared, sticky directory such as /var/tmp: never
// through a symlink, and never adopting a directory someone else owns. Returns false when
// `dir` already exists as `as`'s own private directory (left by an earlier sandbox).
bool make_private_directory(const std::filesystem::path& dir, const RunAs& as);
// Whether `dir` is, itself and not through a symlink, a directory of `as` with mode 0700.
bool is_private_directory(const std::filesystem::path& dir, const RunAs& as);

}  // namespace shardctl::sandbox
