// The write guard: a trigger installed by shardctl on every sharded table of the source shard
// that refuses INSERT, UPDATE and DELETE of rows whose key lies in a range being moved. The
// database enforces it, so even a plain psql session cannot write to a moving key. Ranges live
// in the shard's own table shardctl.offline_ranges; shardctl's purge of moved rows sets
// shardctl.guard_bypass for its own transaction only.
#pragma once

#include <string>
#include <vector>

#include "migrate/key_filter.hpp"
#include "migrate/raw_conn.hpp"

namespace shardctl::migrate {

struct GuardedTable {
  std::string quoted_table;
  std::string key_column;  // raw name
};

// Creates the guard function and range table (idempotent) and the trigger on each table.
void install_guard(RawConn& shard, const RouteSpace& space, const std::vector<GuardedTable>& tables);
// Records a range as offline for (op, batch) (idempotent).
void add_offline_range(RawConn& shard, const std::string& op_id, int batch_no, const routing::KeyRange& range);
// Drops the op's remaining ranges and, when no operation has ranges left, the triggers.
void remove_guard(RawConn& shard, const std::string& op_id, const std::vector<GuardedTable>& tables);

}  // namespace shardctl::migrate
