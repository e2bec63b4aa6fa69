#include "sandbox/sandbox.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "catalog/catalog.hpp"
#include "core/error.hpp"
#include "pg/connection.hpp"
#include "sandbox/pg_binaries.hpp"
#include "sandbox/process.hpp"
#include "sandbox/sample_data.hpp"

namespace shardctl::sandbox {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int base_port = 6400;
constexpr const char* marker = "# written by shardctl sandbox";
const std::vector<std::string> cluster_names = {"catalog", "shards1", "shards2"};

// Holds an exclusive lock on the sandbox's lock file: fleets are created by concurrent test
// processes, and state.json must not lose an update.
class StateLock {
 public:
  explicit StateLock(const fs::path& dir) {
    fd_ = ::open((dir / "state.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw usage_error("cannot open the sandbox lock in " + dir.string());
    while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~StateLock() { ::close(fd_); }
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  int fd_;
};

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

void require_fleet_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 30 && name[0] >= 'a' && name[0] <= 'z';
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (!ok) throw usage_error("invalid fleet name '" + name + "'", "use [a-z][a-z0-9_]*, at most 30 characters");
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

}  // namespace

fs::path default_sandbox_dir() {
  if (const char* d = std::getenv("SHARDCTL_SANDBOX_DIR"); d && *d) return fs::absolute(d);
  return fs::absolute(".shardctl/sandbox");
}

Sandbox::Sandbox(const std::optional<std::string>& dir)
    : dir_(dir ? fs::absolute(*dir).lexically_normal() : default_sandbox_dir()) {
  std::string sock = (run_dir() / ".s.PGSQL.64000").string();
  if (sock.size() > 107)
    throw usage_error("sandbox directory path is too long for a unix socket (" + std::to_string(sock.size()) +
                          " > 107 bytes): " + dir_.string(),
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
    Cluster c{cluster_names[i], base_port + static_cast<int>(i), dir_ / cluster_names[i], false, 0};
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

void Sandbox::start_clusters(UpResult& result) {
  auto bin = find_pg_bindir();
  auto user = server_user();
  for (std::size_t i = 0; i < cluster_names.size(); ++i) {
    fs::path data = dir_ / cluster_names[i];
    fs::path log = dir_ / (cluster_names[i] + ".log");
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
    // Throwaway clusters: durability traded for speed (fsync off), unix sockets only.
    std::string server_opts = "-k " + shell_quote(run_dir().string()) + " -p " + std::to_string(port) +
                              " -c listen_addresses='' -c fsync=off -c synchronous_commit=off"
                              " -c full_page_writes=off -c max_connections=200";
    auto r = run_process({(bin / "pg_ctl").string(), "-D", data.string(), "-l", log.string(), "-w", "-t", "60", "-o",
                          server_opts, "start"},
                         user);
    if (r.exit_code != 0)
      throw unavailable_error("sandbox cluster " + cluster_names[i] + " did not start: " + first_line(r.output),
                              "see " + log.string());
    result.started.push_back(cluster_names[i]);
  }
}

UpResult Sandbox::up(const UpOptions& options) {
  if (options.shards < 1 || options.shards > 64) throw usage_error("--shards must be from 1 to 64");
  if (options.scale < 0) throw usage_error("--scale must be 0 or more");
  UpResult result{!exists(), {}, std::nullopt, dir_ / "shardctl.toml", false};
  auto user = server_user();
  if (result.created) {
    fs::create_directories(dir_);
    hand_over_directory(dir_, user);
    fs::create_directories(run_dir());
    hand_over_directory(run_dir(), user);
  }
  {
    StateLock lock(dir_);
    try {
      start_clusters(result);
      if (result.created) {
        json state = read_state(dir_);
        state["version"] = 1;
        state["user"] = user ? user->name : "";
        write_state(dir_, state);
      }
    } catch (...) {
      // A half-made sandbox would make the next `up` harder, not easier.
      if (result.created) stop_and_remove();
      throw;
    }
  }
  if (options.fleet) {
    for (const auto& f : fleets())
      if (f.name == "demo") result.fleet = f;
    if (!result.fleet) {
      FleetOptions fo;
      fo.shards = options.shards;
      fo.scale = options.scale;
      result.fleet = create_fleet("demo", fo);
    }
    std::string toml = std::string(marker) + "\ncatalog = " + toml_string(result.fleet->catalog_dsn) + "\n";
    std::ofstream(result.config_file) << toml;
    // Commands run from here find the sandbox without flags; never overwrite an operator's file.
    fs::path cwd_config = fs::absolute("shardctl.toml");
    if (!fs::exists(cwd_config) || file_has_marker(cwd_config)) {
      std::ofstream(cwd_config) << toml;
      result.wrote_cwd_config = true;
    }
  }
  return result;
}

std::vector<std::string> Sandbox::stop_and_remove() {
  std::vector<std::string> stopped;
  std::optional<fs::path> bin;
  try {
    bin = find_pg_bindir();
  } catch (const Error&) {
  }
  auto user = server_user();
  for (const auto& name : cluster_names) {
    fs::path data = dir_ / name;
    long pid = postmaster_pid(data);
    if (!process_alive(pid)) continue;
    stopped.push_back(name);
    if (bin) {
      auto r = run_process({(*bin / "pg_ctl").string(), "-D", data.string(), "-m", "fast", "-w", "-t", "30", "stop"}, user);
      if (r.exit_code == 0) continue;
      run_process({(*bin / "pg_ctl").string(), "-D", data.string(), "-m", "immediate", "-w", "-t", "30", "stop"}, user);
    }
    // pg_ctl returns once the pid file is gone; wait for the process itself, and as a last
    // resort kill it, so that `down` never leaves a server behind.
    for (int i = 0; i < 200 && process_alive(pid); ++i) ::usleep(50000);
    if (process_alive(pid)) {
      ::kill(static_cast<pid_t>(pid), SIGKILL);
      for (int i = 0; i < 100 && process_alive(pid); ++i) ::usleep(50000);
    }
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (ec) throw internal_error("cannot remove " + dir_.string() + ": " + ec.message());
  return stopped;
}

std::vector<std::string> Sandbox::down() {
  if (!fs::exists(dir_)) return {};
  if (!exists() && !fs::exists(dir_ / "catalog"))
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

Fleet Sandbox::create_fleet(const std::string& name, const FleetOptions& options) {
  require_fleet_name(name);
  if (options.shards < 1 || options.shards > 64) throw usage_error("--shards must be from 1 to 64");
  if (!exists()) throw usage_error("no sandbox in " + dir_.string(), "run `shardctl sandbox up` first");
  StateLock lock(dir_);
  json state = read_state(dir_);
  for (const auto& f : state["fleets"])
    if (f.at("name") == name) throw usage_error("fleet " + name + " already exists in " + dir_.string());
  auto clusters = status();
  for (const auto& c : clusters)
    if (!c.running) throw unavailable_error("sandbox cluster " + c.name + " is not running", "run `shardctl sandbox up`");

  Fleet fleet;
  fleet.name = name;
  auto create_db = [&](const Cluster& c, const std::string& db) {
    pg::Connection conn(dsn(c, "postgres"), "sandbox cluster " + c.name);
    pqxx::nontransaction tx(conn.raw());
    tx.exec("CREATE DATABASE " + tx.quote_name(db));
    return dsn(c, db);
  };
  fleet.catalog_dsn = create_db(clusters[0], name + "_catalog");
  for (int i = 1; i <= options.shards; ++i) {
    const Cluster& c = clusters[1 + static_cast<std::size_t>((i - 1) % 2)];
    fleet.shards.emplace_back("shard_" + std::to_string(i), create_db(c, name + "_shard_" + std::to_string(i)));
  }
  {
    pg::Connection cat(fleet.catalog_dsn, "catalog");
    catalog::init_catalog(cat);
    if (!options.empty) provision_sample(cat, fleet, options.scale);
  }
  state["fleets"].push_back(fleet_to(fleet));
  write_state(dir_, state);
  return fleet;
}

void Sandbox::provision_sample(pg::Connection& cat, const Fleet& fleet, int scale) {
  // Customers 1..N split into contiguous ranges, one per shard; the first and last ranges are
  // unbounded so the whole key space is mapped.
  const std::int64_t customers = 1000LL * scale;
  const auto n = static_cast<std::int64_t>(fleet.shards.size());
  catalog::Store store(cat);
  auto map = store.create_map("customers", routing::MapKind::range, routing::KeyType::int8);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t first = 1 + i * customers / n, next = 1 + (i + 1) * customers / n;
    const auto& [shard_name, shard_dsn] = fleet.shards[static_cast<std::size_t>(i)];
    store.add_shard(shard_name, shard_dsn);
    std::string range = (i == 0 ? "" : std::to_string(first)) + ".." + (i == n - 1 ? "" : std::to_string(next));
    store.add_range(map.name, range, shard_name);
    pg::Connection shard(shard_dsn, "shard " + shard_name);
    load_sample_shard(shard, first, next - 1);
  }
  store.add_reference_table("public.region");
  store.add_reference_table("public.product");
  for (const char* t : {"public.customers", "public.orders", "public.order_lines"})
    store.add_sharded_table(t, map.name, "customer_id");
  catalog::Xref x;
  x.name = "order_lines_order";
  x.child_table = "public.order_lines";
  x.child_columns = {"customer_id", "order_id"};
  x.parent_table = "public.orders";
  x.parent_columns = {"customer_id", "order_id"};
  x.route_column = "customer_id";
  x.map = map.name;
  store.add_xref(x);
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
  if (fs::exists(dir_ / "shardctl.toml")) j["SHARDCTL_CONFIG"] = (dir_ / "shardctl.toml").string();
  j["SHARDCTL_SANDBOX_DIR"] = dir_.string();
  return j;
}

}  // namespace shardctl::sandbox
