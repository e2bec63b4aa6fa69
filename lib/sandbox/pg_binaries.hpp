// Where PostgreSQL's server programs (initdb, pg_ctl) are.
#pragma once

#include <filesystem>

namespace shardctl::sandbox {

// $SHARDCTL_PG_BINDIR, then the directory of `initdb` on PATH, then the newest
// /usr/lib/postgresql/*/bin. Throws an unavailable Error naming the package otherwise.
std::filesystem::path find_pg_bindir();

}  // namespace shardctl::sandbox
