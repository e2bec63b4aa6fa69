#include "sandbox/state.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "core/error.hpp"

namespace shardctl::sandbox {
namespace fs = std::filesystem;
using nlohmann::json;

StateLock::StateLock(const fs::path& dir) {
  fd_ = ::open((dir / "state.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw usage_error("cannot open the sandbox lock in " + dir.string());
  while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

StateLock::~StateLock() { ::close(fd_); }

json read_state(const fs::path& dir) {
  std::ifstream in(dir / "state.json");
  if (!in) return json{{"fleets", json::array()}};
  try {
    return json::parse(in);
  } catch (const json::exception&) {
    throw data_error((dir / "state.json").string() + " is damaged",
                     "remove the sandbox with `shardctl sandbox down --dir " + dir.string() + "`");
  }
}

void write_state(const fs::path& dir, const json& state) {
  fs::path tmp = dir / "state.json.tmp";
  {
    std::ofstream out(tmp);
    out << state.dump(2) << '\n';
    if (!out) throw internal_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, dir / "state.json");
}

Fleet fleet_from(const json& j) {
  Fleet f;
  f.name = j.at("name");
  f.catalog_dsn = j.at("catalog");
  for (const auto& s : j.at("shards")) f.shards.emplace_back(s.at("name"), s.at("dsn"));
  return f;
}

json fleet_to(const Fleet& f) {
  json shards = json::array();
  for (const auto& [n, d] : f.shards) shards.push_back({{"name", n}, {"dsn", d}});
  return {{"name", f.name}, {"catalog", f.catalog_dsn}, {"shards", shards}};
}

}  // namespace shardctl::sandbox
