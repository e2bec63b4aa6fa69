#include "sandbox/sandbox.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <climits>

#include <csignal>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "pg/connection.hpp"
#include "sandbox/pg_binaries.hpp"
#include "sandbox/process.hpp"
#include "sandbox/state.hpp"

namespace shardctl::sandbox {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int base_port = 6400;
constexpr const char* marker = "# written by shardctl sandbox";
const std::vector<std::string> cluster_names = {"catalog", "shards1", "shards2"};
// Names the clusters' directory outside DIR, and is checked before `down` removes one.
constexpr const char* outside_prefix = "shardctl-sandbox-";

std::string toml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

bool file_has_marker(const fs::path& p) {
  std::ifstream in(p);
  std::string first;
  return in && std::getline(in, first) && first == marker;
}

std::string first_line(const std::string& text) {
  std::string out = text.substr(0, text.find('\n'));
  return out.empty() ? "(no output)" : out;
}

// Alive and not a zombie: a stopped postmaster is reparented to init, which may reap it a
// moment later.
bool process_alive(long pid) {
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'Z';
}

long postmaster_pid(const fs::path& data) {
  std::ifstream pidfile(data / "postmaster.pid");
  long pid = 0;
  return (pidfile >> pid) ? pid : 0;
}

bool cluster_running(const fs::path& data) { return process_alive(postmaster_pid(data)); }

}  // namespace

fs::path default_sandbox_dir() {
  if (const char* d = std::getenv("SHARDCTL_SANDBOX_DIR"); d && *d) return fs::absolute(d);
  return fs::absolute(".shardctl/sandbox");
}

fs::path outside_server_dir(const fs::path& dir) {
  // FNV-1a: stable across builds and platforms, unlike std::hash, so that `down` finds the
  // directory `up` of another build made.
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : dir.string()) h = (h ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  // /var/tmp rather than /tmp: on disk rather than in memory, and kept across a reboot, like
  // the sandbox's own directory.
  std::error_code ec;
  fs::path base = fs::is_directory("/var/tmp", ec) ? fs::path("/var/tmp") : fs::path("/tmp");
  return base / (std::string(outside_prefix) + hex);
}

namespace {

fs::path sandbox_dir(const std::optional<std::string>& dir) {
  if (!dir) return default_sandbox_dir();
  // fs::absolute("") throws; an empty --dir is a typo (an unset variable), never "here".
  if (dir->empty()) throw usage_error("--dir must name a directory, not be empty", "omit --dir for the default");
  fs::path path = fs::absolute(*dir).lexically_normal();
  // The file system would refuse these later, from deep inside a status() call.
  for (const auto& part : path)
    if (part.native().size() > NAME_MAX)
      throw usage_error("--dir has a path component longer than " + std::to_string(NAME_MAX) + " bytes");
  if (path.native().size() >= PATH_MAX) throw usage_error("--dir is longer than " + std::to_string(PATH_MAX) + " bytes");
  return path;
}

}  // namespace

Sandbox::Sandbox(const std::optional<std::string>& dir) : dir_(sandbox_dir(dir)), server_dir_(dir_) {
  if (exists()) {
    try {
      json state = read_state(dir_);
      if (state.contains("server_dir") && state["server_dir"].is_string())
        server_dir_ = state["server_dir"].get<std::string>();
    } catch (const Error&) {
      // A damaged state file must not stop `down`; `up` and `fleet` report it when they read it.
    }
    check_socket_path();
  } else if (!fs::exists(dir_ / "catalog")) {
    // No state: a sandbox removed without `down` (or whose `up` died early) may have left its
    // clusters outside; `down` stops and removes them.
    fs::path out = outside_server_dir(dir_);
    auto user = server_user();
    if (user && is_private_directory(out, *user)) server_dir_ = out;
  }
}

void Sandbox::check_socket_path() const {
  std::string sock = (run_dir() / ".s.PGSQL.64000").string();
  if (sock.size() > 107)
    throw usage_error("sandbox directory path is too long for a unix socket (" + std::to_string(sock.size()) +
                          " > 107 bytes): " + server_dir_.string(),
                      "pass a shorter --dir");
}

bool Sandbox::exists() const { return fs::exists(dir_ / "state.json"); }

std::string Sandbox::dsn(const Cluster& c, const std::string& dbname) const {
  return "host=" + run_dir().string() + " port=" + std::to_string(c.port) + " user=postgres dbname=" + dbname;
}

std::vector<Cluster> Sandbox::status() const {
  std::vector<Cluster> out;
  if (!exists()) return out;
  for (std::size_t i = 0; i < cluster_names.size(); ++i) {
    Cluster c{cluster_names[i], base_port + static_cast<int>(i), server_dir_ / cluster_names[i], false, 0};
    long pid = postmaster_pid(c.data_dir);
    if (process_alive(pid)) {
      c.running = true;
      c.pid = pid;
    }
    out.push_back(c);
  }
  return out;
}

std::vector<Fleet> Sandbox::fleets() const {
  std::vector<Fleet> out;
  if (!exists()) return out;
  const json state = read_state(dir_);  // named: a range-for over a member of a temporary dangles
  for (const auto& f : state["fleets"]) out.push_back(fleet_from(f));
  return out;
}

void Sandbox::choose_server_dir() {
  server_dir_ = dir_;
  auto user = server_user();
  // The sandbox never changes the owner or mode of a directory it did not create: when the
  // server user cannot get to DIR (a parent such as /root, or DIR itself, is private), the
  // clusters move to a private directory of that user instead.
  if (!user || can_search(dir_, *user)) return;
  fs::path out = outside_server_dir(dir_);
  bool made = make_private_directory(out, *user);  // throws, touching nothing, if not ours
  server_dir_ = out;
  if (!made) {
    // Left by a sandbox in DIR that was removed without `down`: its servers may still run.
    std::vector<std::string> stopped;
    stop_clusters(stopped);
    std::error_code ec;
    fs::remove_all(server_dir_, ec);
    if (ec) throw internal_error("cannot remove " + server_dir_.string() + ": " + ec.message());
    make_private_directory(server_dir_, *user);
  }
}

// The bound on the WAL a slot left behind keeps (max_slot_wal_keep_size), in the cluster's
// postgresql.conf rather than on the server's command line: ALTER SYSTEM can still change it
// (tests/integration/t_online_restart.sh invalidates a slot with a tiny one). Once per cluster.
void Sandbox::bound_slot_wal(const fs::path& data) {
  const std::string line = "max_slot_wal_keep_size = 1GB  # shardctl sandbox";
  fs::path conf = data / "postgresql.conf";
  {
    std::ifstream in(conf);
    std::string l;
    while (std::getline(in, l))
      if (l == line) return;
  }
  std::ofstream out(conf, std::ios::app);
  out << '\n' << line << '\n';
  if (!out) throw unavailable_error("could not write " + conf.string());
}

void Sandbox::start_clusters(UpResult& result) {
  auto bin = find_pg_bindir();
  auto user = server_user();
  for (std::size_t i = 0; i < cluster_names.size(); ++i) {
    fs::path data = server_dir_ / cluster_names[i];
    fs::path log = server_dir_ / (cluster_names[i] + ".log");
    int port = base_port + static_cast<int>(i);
    if (!fs::exists(data / "PG_VERSION")) {
      fs::create_directories(data);
      hand_over_directory(data, user);
      auto r = run_process({(bin / "initdb").string(), "-D", data.string(), "-U", "postgres", "-A", "trust", "-E",
                            "UTF8", "--locale=C", "--no-sync", "--no-instructions"},
                           user);
      if (r.exit_code != 0)
        throw unavailable_error("initdb of sandbox cluster " + cluster_names[i] + " failed: " + first_line(r.output));
    }
    if (cluster_running(data)) continue;
    bound_slot_wal(data);
    // pg_ctl opens the log as the server user, who need not be able to write DIR itself.
    if (!fs::exists(log)) {
      std::ofstream{log};
      hand_over_directory(log, user);
    }
    // Throwaway clusters: durability traded for speed (fsync off), unix sockets only. Logical
    // replication for online moves (lib/shardside/replication.hpp): slots, senders, origins and
    // apply workers for several tests at once (the bound on the WAL a slot keeps: see
    // bound_slot_wal()), and subscriptions' workers started within 0.2 s of each other (PostgreSQL 15's launcher
    // starts one at most every wal_retrieve_retry_interval, 5 s by default, on the whole server).
    std::string server_opts = "-k " + shell_quote(run_dir().string()) + " -p " + std::to_string(port) +
                              " -c listen_addresses='' -c fsync=off -c synchronous_commit=off"
                              " -c full_page_writes=off -c max_connections=200"
                              " -c wal_level=logical -c max_replication_slots=32 -c max_wal_senders=32"
                              " -c max_logical_replication_workers=16 -c max_worker_processes=24"
                              " -c wal_retrieve_retry_interval=200ms";
    auto r = run_process({(bin / "pg_ctl").string(), "-D", data.string(), "-l", log.string(), "-w", "-t", "60", "-o",
                          server_opts, "start"},
                         user);
    if (r.exit_code != 0)
      throw unavailable_error("sandbox cluster " + cluster_names[i] + " did not start: " + first_line(r.output),
                              "see " + log.string());
    result.started.push_back(cluster_names[i]);
  }
}

void Sandbox::make_directories(const std::optional<RunAs>& user) {
  const bool dir_existed = fs::exists(dir_);
  fs::create_directories(dir_);
  try {
    choose_server_dir();
    check_socket_path();
    fs::create_directories(run_dir());
    hand_over_directory(run_dir(), user);
    if (server_dir_ != dir_) {
      // DIR/run leads to the sockets as it does when the clusters live in DIR.
      std::error_code ec;
      fs::remove(dir_ / "run", ec);
      fs::create_directory_symlink(run_dir(), dir_ / "run");
    }
  } catch (...) {
    // Nothing runs yet: remove what this call made, and never a directory it did not make.
    std::error_code ec;
    if (server_dir_ != dir_) fs::remove_all(server_dir_, ec);
    if (!dir_existed) fs::remove_all(dir_, ec);
    throw;
  }
}

void Sandbox::start_and_record(UpResult& result, const std::optional<RunAs>& user) {
  StateLock lock(dir_);
  try {
    start_clusters(result);
    if (result.created) {
      json state = read_state(dir_);
      state["version"] = 1;
      state["user"] = user ? user->name : "";
      if (server_dir_ != dir_) state["server_dir"] = server_dir_.string();
      write_state(dir_, state);
    }
    ensure_read_role();
  } catch (...) {
    // A half-made sandbox would make the next `up` harder, not easier.
    if (result.created) stop_and_remove();
    throw;
  }
}

void Sandbox::ensure_demo_fleet(UpResult& result, const UpOptions& options) {
  for (const auto& f : fleets())
    if (f.name == "demo") result.fleet = f;
  if (!result.fleet) {
    FleetOptions fo;
    fo.shards = options.shards;
    fo.scale = options.scale;
    result.fleet = create_fleet("demo", fo);
  }
  std::string toml = std::string(marker) + "\ncatalog = " + toml_string(result.fleet->catalog_dsn) +
                     "\n\n# `shardctl query` connects as this role: it can only read (see shardctl-query(1)).\n"
                     "[query]\nuser = " + toml_string(read_role) + "\n";
  std::ofstream(result.config_file) << toml;
  // Commands run from here find the sandbox without flags; never overwrite an operator's file.
  fs::path cwd_config = fs::absolute("shardctl.toml");
  if (!fs::exists(cwd_config) || file_has_marker(cwd_config)) {
    std::ofstream(cwd_config) << toml;
    result.wrote_cwd_config = true;
  }
}

UpResult Sandbox::up(const UpOptions& options) {
  if (options.shards < 1 || options.shards > 64) throw usage_error("--shards must be from 1 to 64");
  if (options.scale < 0) throw usage_error("--scale must be 0 or more");
  UpResult result{!exists(), {}, std::nullopt, config_file(), false};
  auto user = server_user();
  if (result.created) {
    make_directories(user);
  } else if (!fs::is_directory(server_dir_)) {
    throw unavailable_error("the clusters of the sandbox in " + dir_.string() + " were in " + server_dir_.string() +
                                ", which is gone",
                            "start over: `shardctl sandbox down --dir " + dir_.string() + "`, then `up`");
  }
  start_and_record(result, user);
  if (options.fleet) ensure_demo_fleet(result, options);
  return result;
}

void Sandbox::stop_clusters(std::vector<std::string>& stopped) const {
  std::optional<fs::path> bin;
  try {
    bin = find_pg_bindir();
  } catch (const Error&) {
  }
  auto user = server_user();
  for (const auto& name : cluster_names) {
    fs::path data = server_dir_ / name;
    long pid = postmaster_pid(data);
    if (!process_alive(pid)) continue;
    stopped.push_back(name);
    // Immediate: every caller removes the data right after, so the shutdown checkpoint of a
    // fast stop would write out, for nothing, what the clusters' databases hold in memory
    // (the test suite's clusters hold thousands of databases by the end of a run).
    if (bin) run_process({(*bin / "pg_ctl").string(), "-D", data.string(), "-m", "immediate", "-w", "-t", "30", "stop"}, user);
    // pg_ctl returns once the pid file is gone; wait for the process itself, and as a last
    // resort kill it, so that `down` never leaves a server behind.
    for (int i = 0; i < 200 && process_alive(pid); ++i) ::usleep(50000);
    if (process_alive(pid)) {
      ::kill(static_cast<pid_t>(pid), SIGKILL);
      for (int i = 0; i < 100 && process_alive(pid); ++i) ::usleep(50000);
    }
  }
}

std::vector<std::string> Sandbox::stop_and_remove() {
  std::vector<std::string> stopped;
  stop_clusters(stopped);
  std::error_code ec;
  if (server_dir_ != dir_) {
    // Only a directory of ours: the state file names it, and a damaged or edited one must not
    // make `down` remove something else.
    if (server_dir_.filename().string().rfind(outside_prefix, 0) != 0 ||
        !fs::is_directory(fs::symlink_status(server_dir_, ec)))
      throw internal_error("refusing to remove " + server_dir_.string() + ": not a sandbox's cluster directory");
    fs::remove_all(server_dir_, ec);
    if (ec) throw internal_error("cannot remove " + server_dir_.string() + ": " + ec.message());
  }
  fs::remove_all(dir_, ec);
  if (ec) throw internal_error("cannot remove " + dir_.string() + ": " + ec.message());
  return stopped;
}

std::vector<std::string> Sandbox::down() {
  if (!fs::exists(dir_) && server_dir_ == dir_) return {};
  if (!exists() && !fs::exists(server_dir_ / "catalog"))
    throw usage_error(dir_.string() + " is not a shardctl sandbox", "refusing to remove it");
  // The cwd config written by `up` points at this sandbox only if it names its socket dir.
  fs::path cwd_config = fs::absolute("shardctl.toml");
  if (file_has_marker(cwd_config)) {
    std::ifstream in(cwd_config);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find(run_dir().string()) != std::string::npos) fs::remove(cwd_config);
  }
  return stop_and_remove();
}

std::string Sandbox::env_script() const {
  auto j = env_json();
  std::string out;
  for (const auto& [k, v] : j.items()) out += "export " + k + "=" + shell_quote(v.get<std::string>()) + "\n";
  return out;
}

json Sandbox::env_json() const {
  if (!exists()) throw usage_error("no sandbox in " + dir_.string(), "run `shardctl sandbox up` first");
  json j;
  j["PGHOST"] = run_dir().string();
  j["PGPORT"] = std::to_string(base_port);
  j["PGUSER"] = "postgres";
  std::string db = "postgres";
  for (const auto& f : fleets())
    if (f.name == "demo") db = "demo_catalog";
  j["PGDATABASE"] = db;
  if (fs::exists(config_file())) j["SHARDCTL_CONFIG"] = config_file().string();
  j["SHARDCTL_SANDBOX_DIR"] = dir_.string();
  return j;
}

}  // namespace shardctl::sandbox
