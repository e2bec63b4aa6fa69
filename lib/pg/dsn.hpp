// Connection strings: checking, normalizing and redacting them. Every form libpq accepts
// (key=value strings and postgresql:// URIs) is read with libpq's own parser, and so is a
// dbname that is itself a connection string (libpq expands one, psql does: see
// "expand_dbname"), to any depth.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardctl::pg {

// Throws a usage Error (never echoing a value) when libpq cannot parse the DSN, a nested
// connection string in dbname cannot be parsed, or a port is not a number. `what` names the
// DSN in the message ("the DSN of shard s1", "--catalog").
void require_valid_dsn(std::string_view dsn, std::string_view what);

// True when the DSN carries a password or an sslpassword anywhere, nested ones included.
// shardctl stores and uses none (shardctl(1), CONNECTION STRINGS).
bool dsn_has_password(std::string_view dsn);

// require_valid_dsn, and a usage Error when the DSN carries a password anywhere.
void require_passwordless_dsn(std::string_view dsn, std::string_view what);

// The DSN with every password removed (nested ones too), as key=value text, safe to print.
// Throws like require_valid_dsn.
std::string redact_dsn(std::string_view dsn);

// For output: redact_dsn, or a placeholder for a DSN libpq cannot parse. Catalogs written by
// older versions may hold a password in a DSN; it is never shown.
std::string display_dsn(std::string_view dsn);

// The DSN as key=value text with a connect_timeout (default 5 s) unless one is set, so an
// unreachable host fails fast instead of hanging, and application_name=shardctl.
std::string normalize_dsn(std::string_view dsn);

// One keyword=value a DSN sets, as libpq parsed it (a URI's parts too).
struct DsnSetting {
  std::string key;
  std::string value;
  bool nested = false;  // a dbname that is itself a connection string (libpq expands it)
};
// The settings the DSN names explicitly (no defaults, no environment), in libpq's keyword
// order. Throws like require_valid_dsn.
std::vector<DsnSetting> dsn_settings(std::string_view dsn, std::string_view what);

// The server a DSN connects to, the key by which fan-outs bound their connections
// (shardio/server_pool.hpp): "host:port", hostaddr in place of host where the DSN gives one,
// missing parts from the PG* environment (PGHOST, PGHOSTADDR, PGPORT) and then libpq's defaults
// (the default socket directory, shown as "local", and port 5432), as PQconnectdb reads them
// (a dbname holding a connection string is a database name to it). A DSN that names a service
// and no host is keyed by its service ("service=NAME:port"). Throws like require_valid_dsn.
std::string server_key(std::string_view dsn);

// Short human label for messages, e.g. "host=/tmp/x port=6001 dbname=shard_1". Never holds a
// password; a DSN libpq cannot parse is labelled as such.
std::string describe_dsn(std::string_view dsn);

}  // namespace shardctl::pg
