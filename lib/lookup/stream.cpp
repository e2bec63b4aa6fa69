#include "lookup/stream.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/error.hpp"

namespace shardctl::lookup {
namespace {

constexpr std::size_t chunk = 1 << 20;

// The reader went away (`| head`): their choice, not a failure. Ends the stream quietly.
struct OutputClosed {};

class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) { buf_.reserve(chunk + 4096); }
  ~Writer() = default;
  void append(std::string_view s) {
    buf_.append(s.data(), s.size());
    if (buf_.size() >= chunk) flush();
  }
  void flush() {
    std::size_t done = 0;
    while (done < buf_.size()) {
      ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        // A closed pipe (e.g. `| head`) is the reader's choice, not our failure.
        if (errno == EPIPE) throw OutputClosed{};
        throw unavailable_error(std::string("cannot write output: ") + std::strerror(errno));
      }
      done += static_cast<std::size_t>(n);
    }
    buf_.clear();
  }

 private:
  int fd_;
  std::string buf_;
};

void stream_all(const routing::Router& router, const std::vector<std::string>& shard_names, int in_fd, int out_fd,
                const std::string& input_name, StreamStats& stats);

}  // namespace

StreamStats stream_lookup(const routing::Router& router, const std::vector<std::string>& shard_names, int in_fd,
                          int out_fd, const std::string& input_name) {
  StreamStats stats;
  try {
    stream_all(router, shard_names, in_fd, out_fd, input_name, stats);
  } catch (const OutputClosed&) {
    stats.output_closed = true;
  }
  return stats;
}

namespace {

void stream_all(const routing::Router& router, const std::vector<std::string>& shard_names, int in_fd, int out_fd,
                const std::string& input_name, StreamStats& stats) {
  Writer out(out_fd);
  std::string buf(chunk, '\0');
  std::string carry;  // an incomplete last line of the previous read
  std::uint64_t line_no = 0;

  auto handle = [&](std::string_view key) {
    ++line_no;
    if (!key.empty() && key.back() == '\r') key.remove_suffix(1);
    std::optional<routing::Route> route;
    try {
      route = router.route_text(key);
    } catch (const Error& e) {
      out.flush();
      throw usage_error(input_name + ":" + std::to_string(line_no) + ": " + e.what(), e.hint());
    }
    ++stats.keys;
    out.append(key);
    out.append("\t");
    if (!route || route->shard_index < 0) {
      ++stats.unmapped;
      out.append("-\n");
      return;
    }
    if (!route->online) ++stats.offline;
    out.append(shard_names[static_cast<std::size_t>(route->shard_index)]);
    out.append("\n");
  };

  for (;;) {
    ssize_t n = ::read(in_fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw unavailable_error(std::string("cannot read ") + input_name + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    std::string_view data(buf.data(), static_cast<std::size_t>(n));
    std::size_t start = 0;
    if (!carry.empty()) {
      auto nl = data.find('\n');
      if (nl == std::string_view::npos) {
        carry.append(data);
        continue;
      }
      carry.append(data.substr(0, nl));
      handle(carry);
      carry.clear();
      start = nl + 1;
    }
    for (;;) {
      auto nl = data.find('\n', start);
      if (nl == std::string_view::npos) break;
      handle(data.substr(start, nl - start));
      start = nl + 1;
    }
    carry.assign(data.substr(start));
  }
  if (!carry.empty()) handle(carry);
  out.flush();
}

}  // namespace

}  // namespace shardctl::lookup
