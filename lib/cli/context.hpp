// What a command handler gets: the global options, the config, a lazily opened catalog
// connection, and helpers to write output the way --format and --quiet ask.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "pg/connection.hpp"

namespace shardctl::cli {

enum class Format { text, json, nagios, csv };  // nagios, csv: only families that allow them

struct GlobalOptions {
  std::optional<std::string> config_path;
  std::optional<std::string> catalog;
  std::string format = "text";
  bool quiet = false;
  bool verbose = false;
  bool dry_run = false;
  bool yes = false;
};

class Context {
 public:
  Context(std::string family, const GlobalOptions& options);
  ~Context();

  const std::string& family() const noexcept { return family_; }
  const GlobalOptions& options() const noexcept { return options_; }
  Format format() const noexcept { return format_; }
  bool json() const noexcept { return format_ == Format::json; }
  bool dry_run() const noexcept { return options_.dry_run; }

  // The config file, loaded on first use (data Error with file:line:col when malformed).
  const config::Config& config();
  // The catalog DSN: --catalog, then $SHARDCTL_CATALOG, then the config's `catalog`.
  // Usage Error with a hint when none is set.
  std::string catalog_dsn();
  // The catalog connection, opened on first use.
  pg::Connection& catalog();

  // How many shards a fan-out works on at once, and so the most connections it holds to the
  // shard databases of one server (shardctl(1), CONNECTIONS): `flag` (--parallel), else
  // [defaults] parallel, lowered to [defaults] max_connections_per_server when that is smaller
  // (said with --verbose).
  int parallel(std::optional<int> flag);

  // Output: results on stdout; notes on stderr unless --quiet; details only with --verbose.
  std::ostream& out();
  void note(const std::string& line);     // stderr unless --quiet
  void verbose(const std::string& line);  // stderr with --verbose
  void warn(const std::string& line);     // stderr always, "warning: " prefixed
  void print_json(const nlohmann::json& doc);  // one document on stdout (+ "dry_run": true in a dry run)

  // Asks "question [y/N]" on a TTY unless --yes; returns true to go ahead. Without a TTY there
  // is nobody to ask, so it goes ahead (shardctl(1): the confirmation is asked on a TTY).
  bool confirm(const std::string& question);

  // The process exit code once the handler returns: 0 unless the command reports an outcome
  // through it (check: 1 warning, 2 critical, 3 unknown, shardctl(1), EXIT STATUS).
  void set_exit_status(int code) noexcept { exit_status_ = code; }
  int exit_status() const noexcept { return exit_status_; }

 private:
  std::string family_;
  GlobalOptions options_;
  Format format_;
  std::optional<config::Config> config_;
  std::unique_ptr<pg::Connection> catalog_;
  int exit_status_ = 0;
};

}  // namespace shardctl::cli
