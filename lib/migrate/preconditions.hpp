// Preconditions a move checks against the whole schema and the catalog, beyond the moving
// tables' own shape (plan.cpp): operations in flight, foreign keys from and to tables that do
// not move, NULL keys, and whether batch statements can use an index.
#pragma once

#include <string>
#include <vector>

#include "catalog/key_sql.hpp"
#include "migrate/operation.hpp"
#include "pg/connection.hpp"

namespace shardctl::migrate {

// Throws locked_error (exit 75) naming the operation when an unfinished operation of `map`
// claims any key of `claim`: its batches cut and take mappings offline, so planning against
// them would give a wrong answer. `what` says which keys were asked for ("--at 10000").
void refuse_if_operation_overlaps(pg::Connection& catalog, const catalog::Map& map, const catalog::RangeParams& claim,
                                  const std::string& what);
// The same for an offline mapping in the operation's range (an operation, maybe a dead one,
// is moving it).
void refuse_if_offline(const Plan& plan, const std::vector<catalog::Mapping>& mappings);

// Foreign keys on `shard` from tables that do not move with the map (unregistered, on another
// map, reference tables) into the moving tables: the purge would cascade into, or fail on,
// rows that were never copied. One problem per constraint.
void check_foreign_keys_into(shardio::RawConn& shard, const std::string& shard_name, const Plan& plan,
                             std::vector<std::string>& problems);

// Foreign keys among the moving tables (a table's reference to itself included) that do not
// pair the child's key column with the parent's: a row of a key that stays may reference a
// row that moves (the purge would cascade into it, fail on it, or leave it dangling), or a
// moving row one that stays. One problem per constraint.
void check_foreign_keys_among(shardio::RawConn& shard, const std::string& shard_name, const Plan& plan,
                              std::vector<std::string>& problems);

// Foreign keys from the moving tables to tables that neither move nor are registered
// reference tables: the moving rows' parents must already be on the target.
void check_unmoved_parents(shardio::RawConn& source, const std::string& source_name, shardio::RawConn& target, const Plan& plan,
                           const routing::KeyRange& range, std::vector<std::string>& problems);

// Rows whose key is NULL belong to no shard: refuse while any exist on the source.
void check_null_keys(shardio::RawConn& source, const std::string& source_name, const Plan& plan, std::vector<std::string>& problems);

// EXPLAINs a narrow batch filter on each moving table with sequential scans disabled; a table
// the planner still scans whole is a problem naming the index to create.
void check_index_use(shardio::RawConn& shard, const std::string& shard_name, const Plan& plan, std::vector<std::string>& problems);

}  // namespace shardctl::migrate
