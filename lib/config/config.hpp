// The shardctl.toml configuration (SPEC §5): where it is found, what it may hold.
// Every key the file may contain is declared once in config_schema.cpp; an unknown key,
// a wrong type or a syntax error is a data Error citing file:line:col.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shardctl::config {

struct ArchiveJob {
  std::string name;
  std::string table;
  std::string where;
  bool cascade = false;
  std::string to;  // "dir:/path" or "postgres:DSN"
};

struct Config {
  std::optional<std::filesystem::path> path;  // the file read; empty when none was found
  std::optional<std::string> catalog;         // catalog DSN
  std::int64_t batch_size = 1000;             // [defaults] batch_size
  std::int64_t parallel = 4;                  // [defaults] parallel
  std::vector<ArchiveJob> archive_jobs;       // [[archive.job]]
};

// Where the config comes from, in SPEC order: the explicit --config FILE, then
// $SHARDCTL_CONFIG, then ./shardctl.toml, then $XDG_CONFIG_HOME/shardctl/config.toml
// (~/.config when XDG_CONFIG_HOME is unset). Returns nullopt when no file exists and none
// was named explicitly. An explicitly named file (flag or env) that does not exist is a
// usage Error.
std::optional<std::filesystem::path> locate_config(const std::optional<std::string>& explicit_path);

// Parses config text; `origin` names the file in error messages ("path:line:col: ...").
Config parse_config(std::string_view text, const std::string& origin);

// Reads and parses the located file, or returns defaults when there is none.
Config load_config(const std::optional<std::string>& explicit_path);

}  // namespace shardctl::config
