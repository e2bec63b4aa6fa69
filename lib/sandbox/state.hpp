// The sandbox's state file (DIR/state.json: its fleets and where its clusters live) and the
// lock that serializes every change to it.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "sandbox/sandbox.hpp"

namespace shardctl::sandbox {

// Holds an exclusive lock on the sandbox's lock file: fleets are created by concurrent test
// processes, and state.json must not lose an update.
class StateLock {
 public:
  explicit StateLock(const std::filesystem::path& dir);
  ~StateLock();
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  int fd_;
};

nlohmann::json read_state(const std::filesystem::path& dir);
void write_state(const std::filesystem::path& dir, const nlohmann::json& state);

Fleet fleet_from(const nlohmann::json& j);
nlohmann::json fleet_to(const Fleet& f);

}  // namespace shardctl::sandbox
