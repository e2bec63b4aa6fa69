#include "sandbox/process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace shardctl::sandbox {
namespace fs = std::filesystem;

std::optional<RunAs> server_user() {
  if (geteuid() != 0) return std::nullopt;
  std::vector<std::string> candidates;
  if (const char* u = std::getenv("SHARDCTL_SANDBOX_USER"); u && *u) candidates.emplace_back(u);
  else candidates = {"postgres", "nobody"};
  for (const auto& name : candidates) {
    if (const passwd* pw = getpwnam(name.c_str()); pw && pw->pw_uid != 0)
      return RunAs{name, pw->pw_uid, pw->pw_gid};
  }
  throw usage_error("running as root, and no unprivileged user to run PostgreSQL as (tried " + candidates[0] +
                        (candidates.size() > 1 ? ", nobody" : "") + ")",
                    "PostgreSQL refuses to run as root: create a user, or set SHARDCTL_SANDBOX_USER");
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::optional<RunAs>& as) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw internal_error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) throw internal_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(pipefd[1], STDOUT_FILENO);
    dup2(pipefd[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    if (as) {
      if (setgroups(0, nullptr) != 0 || setgid(as->gid) != 0 || setuid(as->uid) != 0) {
        dprintf(STDERR_FILENO, "cannot switch to user %s: %s\n", as->name.c_str(), std::strerror(errno));
        _exit(126);
      }
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(pipefd[1]);
  ProcessResult result{0, {}};
  std::array<char, 4096> buf;
  for (;;) {
    ssize_t n = read(pipefd[0], buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf.data(), static_cast<std::size_t>(n));
  }
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool can_search(const fs::path& dir, const RunAs& as) {
  pid_t pid = fork();
  if (pid < 0) throw internal_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The same identity run_process gives the servers: no supplementary groups.
    if (setgroups(0, nullptr) != 0 || setgid(as.gid) != 0 || setuid(as.uid) != 0) _exit(2);
    _exit(access(dir.c_str(), X_OK) == 0 ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void hand_over_directory(const fs::path& path, const std::optional<RunAs>& as) {
  if (!as) return;
  if (chown(path.c_str(), as->uid, as->gid) != 0)
    throw usage_error("cannot hand " + path.string() + " to user " + as->name + ": " + std::strerror(errno));
  // The server must reach its data and socket directories through every parent.
  fs::path parent = path.parent_path();
  if (!can_search(parent, *as))
    throw usage_error("user " + as->name + " cannot reach " + path.string() + " because " + parent.string() +
                          " or a directory above it is not searchable by it",
                      "pass --dir somewhere else");
}

bool make_private_directory(const fs::path& dir, const RunAs& as) {
  if (mkdir(dir.c_str(), 0700) == 0) {
    // mkdir applies the umask; the mode must be exactly 0700 whatever it is.
    int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    bool ok = fd >= 0 && fchown(fd, as.uid, as.gid) == 0 && fchmod(fd, 0700) == 0;
    int err = errno;
    if (fd >= 0) close(fd);
    if (!ok) throw internal_error("cannot hand " + dir.string() + " to user " + as.name + ": " + std::strerror(err));
    return true;
  }
  if (errno != EEXIST) throw usage_error("cannot create " + dir.string() + ": " + std::strerror(errno));
  if (!is_private_directory(dir, as))
    throw usage_error(dir.string() + " exists and is not a private directory of user " + as.name,
                      "someone else made it: inspect and remove it, or pass another --dir");
  return false;
}

bool is_private_directory(const fs::path& dir, const RunAs& as) {
  struct stat st {};
  return lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == as.uid && (st.st_mode & 077) == 0;
}

}  // namespace shardctl::sandbox
