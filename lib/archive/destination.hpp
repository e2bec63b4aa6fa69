// Where an archive job sends rows: "dir:PATH" (zstd COPY files and a manifest) or
// "postgres:DSN" (archive tables in another database). Parsed once, where the job enters.
#pragma once

#include <string>

namespace shardctl::archive {

struct Destination {
  enum class Kind { dir, postgres } kind = Kind::dir;
  std::string path;  // dir: absolute directory
  std::string dsn;   // postgres: connection string (never a password)

  // For messages: "dir:/var/lib/x" or "postgres:host=a dbname=b" (redacted).
  std::string describe() const;
};

// Usage Error (64) when `text` has neither prefix, names an empty or relative-to-nothing path,
// or holds a DSN libpq rejects or that carries a password.
Destination parse_destination(const std::string& text);

}  // namespace shardctl::archive
