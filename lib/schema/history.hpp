// shardctl.schema_history on a shard, as `shardctl schema` uses it: one row per attempt to apply
// a migration file (success or failure, or started and never finished), baseline rows and
// repair rows. The table, its SQL and its reads and writes are lib/shardside's
// (shardside/schema_history.hpp); these are the names the schema folder calls them by.
#pragma once

#include <cstdint>
#include <vector>

#include "schema/plan.hpp"
#include "shardio/raw_conn.hpp"
#include "shardside/schema_history.hpp"

namespace shardctl::schema {

// The rows in id order; empty when the table does not exist yet (nothing is created).
inline std::vector<HistoryRow> read_history(shardio::RawConn& conn) { return shardside::read_schema_history(conn); }

// Creates the table if missing and upgrades a table of the first shape; under the rollout lock.
inline void ensure_history(shardio::RawConn& conn) { shardside::ensure_schema_history(conn); }

// The row as INSERT parameters.
using NewRow = shardside::NewSchemaHistoryRow;

// Runs on `conn` in whatever transaction state it is (inside the migration's transaction for
// a success, in autocommit for a failure or a start). Returns the row's id.
inline std::int64_t insert_history(shardio::RawConn& conn, const NewRow& row) { return shardside::insert_schema_history(conn, row); }

// Records how the attempt of row `id` (inserted as started) ended.
inline void finish_history(shardio::RawConn& conn, std::int64_t id, bool success, std::int64_t duration_ms) {
  shardside::finish_schema_history(conn, id, success, duration_ms);
}

}  // namespace shardctl::schema
