// The sandbox (shardctl-sandbox(1)): local throwaway PostgreSQL clusters on unix sockets under one
// directory, with fleets (a catalog database + shard databases) on them. The test suite uses
// the same machinery for its clusters.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pg/connection.hpp"

namespace shardctl::sandbox {

struct RunAs;  // process.hpp

// The login role `shardctl query` runs as in a sandbox: on every cluster, holding
// pg_read_all_data and nothing more, named by the [query] user of the config `up` writes.
// The clusters trust local connections, so it needs no password.
inline constexpr const char* read_role = "shardctl_read";

struct Cluster {
  std::string name;  // "catalog", "shards1", "shards2"
  int port;
  std::filesystem::path data_dir;
  bool running = false;
  long pid = 0;
};

struct Fleet {
  std::string name;
  std::string catalog_dsn;
  std::vector<std::pair<std::string, std::string>> shards;  // name, dsn
};

struct UpOptions {
  int shards = 4;      // shard databases of the default fleet
  int scale = 1;       // 1000 * scale customers in the sample data
  bool fleet = true;   // create the default fleet "demo" with sample data
};

struct FleetOptions {
  int shards = 4;
  int scale = 1;
  bool empty = false;  // databases and an initialized catalog, nothing registered or loaded
  // Clone the fleet from template databases built on first use for these options (and kept
  // until `down`) instead of creating and loading every database.
  bool from_template = false;
  // --dry-run: every check of create_fleet runs; nothing is created (the Fleet returned holds
  // only the name).
  bool preview = false;
};

struct UpResult {
  bool created;  // false when the sandbox existed (clusters started if they were stopped)
  std::vector<std::string> started;
  std::optional<Fleet> fleet;
  std::filesystem::path config_file;
  bool wrote_cwd_config = false;
};

class Sandbox {
 public:
  // `dir` may be relative; it is made absolute. Default: $SHARDCTL_SANDBOX_DIR, else
  // ./.shardctl/sandbox.
  explicit Sandbox(const std::optional<std::string>& dir);

  const std::filesystem::path& dir() const noexcept { return dir_; }
  // Where the clusters' data, logs and sockets live: dir() itself, or, when the server user
  // cannot reach dir() (root running the sandbox under /root or in a mode-700 directory), a
  // private directory of that user outside it (see outside_server_dir()).
  const std::filesystem::path& server_dir() const noexcept { return server_dir_; }
  std::filesystem::path run_dir() const { return server_dir_ / "run"; }
  std::filesystem::path config_file() const { return dir_ / "shardctl.toml"; }
  bool exists() const;

  UpResult up(const UpOptions& options);
  // Stops every cluster (fast, then immediate) and removes the directory. Returns the
  // clusters that were running.
  std::vector<std::string> down();
  std::vector<Cluster> status() const;
  std::vector<Fleet> fleets() const;
  Fleet create_fleet(const std::string& name, const FleetOptions& options);

  // Shell exports for `eval "$(shardctl sandbox env)"`.
  std::string env_script() const;
  nlohmann::json env_json() const;

  // DSN of a database on a cluster of this sandbox.
  std::string dsn(const Cluster& cluster, const std::string& dbname) const;

 private:
  // The steps of `up`. A new sandbox: DIR, the clusters' directory (choose_server_dir) and the
  // socket directory, all removed again if one fails.
  void make_directories(const std::optional<RunAs>& user);
  // Under the state lock: the clusters started (made first for a new sandbox), a new sandbox's
  // state written, read_role on every cluster; a new sandbox that fails is removed.
  void start_and_record(UpResult& result, const std::optional<RunAs>& user);
  // The fleet "demo" (made unless there), and the config files that name it: DIR/shardctl.toml,
  // and ./shardctl.toml unless an operator's file is there.
  void ensure_demo_fleet(UpResult& result, const UpOptions& options);
  void choose_server_dir();
  void check_socket_path() const;
  void start_clusters(UpResult& result);
  static void bound_slot_wal(const std::filesystem::path& data);
  // Creates read_role on every running cluster unless it is there (`up` of a sandbox made
  // before the role existed adds it too).
  void ensure_read_role() const;
  std::vector<std::string> stop_and_remove();
  // Stops every running cluster at once (-m immediate): only for clusters about to be removed.
  void stop_clusters(std::vector<std::string>& stopped) const;
  Fleet make_fleet(const std::string& prefix, const FleetOptions& options) const;
  void ensure_template(const FleetOptions& options);
  Fleet clone_template(const std::string& name, const FleetOptions& options) const;

  std::filesystem::path dir_;
  std::filesystem::path server_dir_;
};

std::filesystem::path default_sandbox_dir();

// The directory the clusters of sandbox `dir` use when their server user cannot reach `dir`:
// /var/tmp/shardctl-sandbox-HASH, HASH a stable 64-bit hash of the absolute path of `dir`.
std::filesystem::path outside_server_dir(const std::filesystem::path& dir);

}  // namespace shardctl::sandbox
