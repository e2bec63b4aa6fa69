// Connection strings: checking, normalizing and redacting them. Both key=value strings and
// postgresql:// URIs are understood (libpq's own parser does the work).
#pragma once

#include <string>
#include <string_view>

namespace shardctl::pg {

// True when the DSN carries a password (shardctl stores none: SPEC §4 Security).
bool dsn_has_password(std::string_view dsn);

// The DSN with any password removed, as key=value text, safe to print or store.
// Throws a usage Error when libpq cannot parse it (the message never echoes the DSN).
std::string redact_dsn(std::string_view dsn);

// The DSN as key=value text with a connect_timeout (default 5 s) unless one is set, so an
// unreachable host fails fast instead of hanging, and application_name=shardctl.
std::string normalize_dsn(std::string_view dsn);

// Short human label for messages, e.g. "host=/tmp/x port=6001 dbname=shard_1".
std::string describe_dsn(std::string_view dsn);

}  // namespace shardctl::pg
