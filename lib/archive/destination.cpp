#include "archive/destination.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "pg/dsn.hpp"

namespace shardctl::archive {

std::string Destination::describe() const {
  return kind == Kind::dir ? "dir:" + path : "postgres:" + pg::display_dsn(dsn);
}

Destination parse_destination(const std::string& text) {
  const std::string hint = "write dir:/path/to/archive or postgres:host=... dbname=...";
  Destination d;
  if (text.rfind("dir:", 0) == 0) {
    std::string path = text.substr(4);
    if (path.empty()) throw usage_error("archive destination dir: names no directory", hint);
    d.kind = Destination::Kind::dir;
    d.path = std::filesystem::absolute(path).lexically_normal().string();
    return d;
  }
  if (text.rfind("postgres:", 0) == 0) {
    d.kind = Destination::Kind::postgres;
    d.dsn = text.substr(9);
    pg::require_passwordless_dsn(d.dsn, "the archive destination");
    return d;
  }
  throw usage_error("archive destination must start with dir: or postgres:", hint);
}

}  // namespace shardctl::archive
