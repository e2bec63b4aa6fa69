// Writing a file an operator names so that no reader ever sees half of it (a Prometheus
// textfile, an exported pooler config): the text goes to FILE.tmp.PID in the same directory,
// is synced, and is renamed over FILE.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace shardctl {

// Throws a usage Error naming the path (and `hint`) when it cannot be written; no .tmp file is left.
inline void write_file_atomically(const std::string& path, const std::string& text, const std::string& hint) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& what) {
    std::string reason = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw usage_error("cannot " + what + " " + path + ": " + reason, hint);
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("write");
  std::size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) fail("write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename into");
}

}  // namespace shardctl
