// Reading a file the operator names (config, plan, archive manifest, load file, migration):
// only a regular file of bounded size is read. A FIFO would block the open or the read forever,
// /dev/zero would be read until memory runs out, a directory cannot be read at all: each is
// refused before a byte is read, as bad input data (65), naming the file and what it is.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/utf8.hpp"

namespace shardctl {

struct InputFileRules {
  InputFileRules(std::string what_, std::uintmax_t max_bytes_, ErrorKind unopenable_, std::string hint_)
      : what(std::move(what_)), max_bytes(max_bytes_), unopenable(unopenable_), hint(std::move(hint_)) {}

  std::string what;          // shown in messages: "plan file", "archive manifest", ...
  std::uintmax_t max_bytes;  // larger files are refused (65)
  // A file that cannot be opened (missing, no permission): a usage error where the path is what
  // the operator typed as an argument, a data error where it is part of the data.
  ErrorKind unopenable;
  std::string hint;          // shown with every refusal
  bool no_follow = false;    // refuse a symbolic link (the caller resolved it itself)
  std::string shown;         // how messages show the file (default: its path)
};

// An open file descriptor, closed when it goes out of scope.
class InputFd {
 public:
  explicit InputFd(int fd) noexcept : fd_(fd) {}
  InputFd(InputFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  InputFd(const InputFd&) = delete;
  InputFd& operator=(const InputFd&) = delete;
  InputFd& operator=(InputFd&&) = delete;
  ~InputFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  // Gives the descriptor up (e.g. to fdopen, which closes it from then on).
  int release() noexcept {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

namespace input_file_detail {

inline const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// "67108864 bytes (64 MiB)"
inline std::string limit_text(std::uintmax_t n) {
  std::string out = std::to_string(n) + " bytes";
  if (n >= (1u << 30) && n % (1u << 30) == 0) out += " (" + std::to_string(n >> 30) + " GiB)";
  else if (n >= (1u << 20) && n % (1u << 20) == 0) out += " (" + std::to_string(n >> 20) + " MiB)";
  return out;
}

[[noreturn]] inline void refuse_kind(const std::string& shown, const InputFileRules& rules, mode_t mode) {
  throw data_error(rules.what + " " + shown + " is not a regular file (" + file_kind(mode) + ")", rules.hint);
}

[[noreturn]] inline void refuse_size(const std::string& shown, const InputFileRules& rules, std::uintmax_t size,
                                     bool at_least) {
  throw data_error(rules.what + " " + shown + " is " + (at_least ? "over " : "") + std::to_string(size) +
                       " bytes; the limit for " + rules.what + "s is " + limit_text(rules.max_bytes),
                   rules.hint);
}

}  // namespace input_file_detail

// Opens `path` for reading if it is a regular file of at most rules.max_bytes. The kind is
// checked before the open (so a device is never opened) and again on the open descriptor (so
// a FIFO swapped in meanwhile is refused, not waited on: O_NONBLOCK makes the open itself return).
inline InputFd open_input_file(const std::filesystem::path& path, const InputFileRules& rules) {
  using namespace input_file_detail;
  std::string shown = rules.shown.empty() ? printable(path.string()) : rules.shown;
  struct stat st {};
  int rc = rules.no_follow ? ::lstat(path.c_str(), &st) : ::stat(path.c_str(), &st);
  if (rc != 0)
    throw Error(rules.unopenable, "cannot read " + rules.what + " " + shown + ": " + std::strerror(errno), rules.hint);
  if (!S_ISREG(st.st_mode)) refuse_kind(shown, rules, st.st_mode);
  int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (rules.no_follow ? O_NOFOLLOW : 0);
  InputFd fd(::open(path.c_str(), flags));
  if (fd.get() < 0)
    throw Error(rules.unopenable, "cannot read " + rules.what + " " + shown + ": " + std::strerror(errno), rules.hint);
  if (::fstat(fd.get(), &st) != 0)
    throw data_error("cannot read " + rules.what + " " + shown + ": " + std::strerror(errno), rules.hint);
  if (!S_ISREG(st.st_mode)) refuse_kind(shown, rules, st.st_mode);
  if (static_cast<std::uintmax_t>(st.st_size) > rules.max_bytes)
    refuse_size(shown, rules, static_cast<std::uintmax_t>(st.st_size), false);
  return fd;
}

// The whole content of `path`, under the rules of open_input_file. A file that grows past the
// limit while it is read is refused too.
inline std::string read_input_file(const std::filesystem::path& path, const InputFileRules& rules) {
  using namespace input_file_detail;
  InputFd fd = open_input_file(path, rules);
  std::string shown = rules.shown.empty() ? printable(path.string()) : rules.shown;
  std::string out;
  char buf[65536];
  while (true) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw data_error("cannot read " + rules.what + " " + shown + ": " + std::strerror(errno), rules.hint);
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > rules.max_bytes) refuse_size(shown, rules, rules.max_bytes, true);
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace shardctl
