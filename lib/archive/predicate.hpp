// An archive predicate is the one piece of SQL an operator supplies verbatim (SPEC §4). Before
// anything changes it is checked on each shard against the root table: it must parse, name only
// columns that exist, and read no table but the root (and its partitions). The check runs
// EXPLAIN in a read-only transaction, so nothing is executed; a one-statement protocol refuses
// "true); DROP TABLE x; --" outright. (A function the predicate calls can still read other
// tables: EXPLAIN cannot see inside functions.)
#pragma once

#include <string>

#include "pg/connection.hpp"

namespace shardctl::archive {

// `schema` and `table` are raw names; `shown` is the table in display form for messages.
// Throws a usage Error (64) naming what is wrong.
void validate_predicate(pg::Connection& shard, const std::string& schema, const std::string& table,
                        const std::string& shown, const std::string& predicate);

}  // namespace shardctl::archive
