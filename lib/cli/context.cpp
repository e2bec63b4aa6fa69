#include "cli/context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "core/error.hpp"
#include "pg/dsn.hpp"

namespace shardctl::cli {
namespace {

Format parse_format(const std::string& name) {
  if (name == "text") return Format::text;
  if (name == "json") return Format::json;
  if (name == "nagios") return Format::nagios;
  if (name == "csv") return Format::csv;
  throw usage_error("unknown --format '" + name + "'", "use text or json");
}

}  // namespace

Context::Context(std::string family, const GlobalOptions& options)
    : family_(std::move(family)), options_(options), format_(parse_format(options.format)) {}

Context::~Context() = default;

const config::Config& Context::config() {
  if (!config_) config_ = config::load_config(options_.config_path);
  return *config_;
}

std::string Context::catalog_dsn() {
  // The config's catalog was checked when the file was read (65, file:line:col); the others are
  // operator input (64). Either way no password is taken: libpq finds credentials itself.
  if (options_.catalog) {
    pg::require_passwordless_dsn(*options_.catalog, "--catalog");
    return *options_.catalog;
  }
  if (const char* env = std::getenv("SHARDCTL_CATALOG"); env && *env) {
    pg::require_passwordless_dsn(env, "$SHARDCTL_CATALOG");
    return env;
  }
  if (config().catalog) return *config().catalog;
  throw usage_error("no catalog connection string is set",
                    "pass --catalog DSN, set SHARDCTL_CATALOG, put catalog = \"...\" in "
                    "shardctl.toml, or run `shardctl sandbox up`");
}

pg::Connection& Context::catalog() {
  if (!catalog_) catalog_ = std::make_unique<pg::Connection>(catalog_dsn(), "catalog");
  return *catalog_;
}

int Context::parallel(std::optional<int> flag) {
  const auto& cfg = config();
  std::int64_t wanted = flag ? *flag : cfg.parallel;
  if (cfg.max_connections_per_server && wanted > *cfg.max_connections_per_server) {
    verbose(std::string(flag ? "--parallel " : "[defaults] parallel = ") + std::to_string(wanted) +
            " is above [defaults] max_connections_per_server = " + std::to_string(*cfg.max_connections_per_server) +
            ": " + std::to_string(*cfg.max_connections_per_server) + " at once");
    wanted = *cfg.max_connections_per_server;
  }
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, 1 << 20));
}

std::ostream& Context::out() { return std::cout; }

void Context::note(const std::string& line) {
  if (!options_.quiet) std::cerr << line << '\n';
}

void Context::verbose(const std::string& line) {
  if (options_.verbose && !options_.quiet) std::cerr << line << '\n';
}

void Context::warn(const std::string& line) { std::cerr << "warning: " << line << '\n'; }

// Text from the catalog and shards is UTF-8, but a byte that is not must never abort the
// output: it becomes U+FFFD.
// A dry run prints the document the real run would, marked "dry_run": true.
void Context::print_json(const nlohmann::json& doc) {
  const nlohmann::json* shown = &doc;
  nlohmann::json marked;
  if (dry_run() && doc.is_object() && !doc.contains("dry_run")) {
    marked = doc;
    marked["dry_run"] = true;
    shown = &marked;
  }
  std::cout << shown->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

bool Context::confirm(const std::string& question) {
  if (options_.yes || !isatty(STDIN_FILENO)) return true;
  std::cerr << question << " [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

}  // namespace shardctl::cli
