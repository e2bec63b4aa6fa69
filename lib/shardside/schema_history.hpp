// shardctl.schema_history on a shard (sql/schema_history.sql): one row per attempt of
// `shardctl schema` to apply a migration file (success or failure, or started and never
// finished), baseline rows and repair rows. Created on first use, under the rollout lock, and
// upgraded there from the shape earlier versions created.
#pragma once

#include <cstdint>
#include <vector>

#include "shardio/raw_conn.hpp"
#include "shardside/schema_history_row.hpp"

namespace shardctl::shardside {

// Creates the table (and schema shardctl) if missing, and brings a table of the first shape
// (success NOT NULL, no note) to the current one (sql/schema_history_2.sql), with an ALTER TABLE
// only when needed, so a current table is never locked for it. The shard may already have a
// `shardctl` schema (move guards live there); that is fine.
void ensure_schema_history(shardio::RawConn& conn);

// The rows in id order; empty when the table does not exist yet (nothing is created). Reads
// both shapes of the table (before and after ensure_schema_history's upgrade).
std::vector<SchemaHistoryRow> read_schema_history(shardio::RawConn& conn);

// Runs on `conn` in whatever transaction state it is (inside the migration's transaction for
// a success, in autocommit for a failure or a start). Returns the row's id.
std::int64_t insert_schema_history(shardio::RawConn& conn, const NewSchemaHistoryRow& row);

// Records how the attempt of row `id` (inserted as started) ended.
void finish_schema_history(shardio::RawConn& conn, std::int64_t id, bool success, std::int64_t duration_ms);

}  // namespace shardctl::shardside
