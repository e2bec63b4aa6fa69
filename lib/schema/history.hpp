// shardctl.schema_history on a shard: one row per attempt to apply a migration file (success
// or failure), and baseline rows. Created on first use, under the rollout lock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schema/plan.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::schema {

// The rows in id order; empty when the table does not exist yet (nothing is created).
std::vector<HistoryRow> read_history(shardio::RawConn& conn);

// CREATE SCHEMA / TABLE IF NOT EXISTS. The shard may already have a `shardctl` schema (move
// guards live there); that is fine.
void ensure_history(shardio::RawConn& conn);

// The row as INSERT parameters, for the statement `insert_history_sql`.
struct NewRow {
  std::optional<std::string> version;
  std::string name;
  std::string kind;
  std::optional<std::string> checksum;
  std::int64_t duration_ms = 0;
  bool success = true;
};
// Runs on `conn` in whatever transaction state it is (inside the migration's transaction for
// a success, in autocommit for a failure).
void insert_history(shardio::RawConn& conn, const NewRow& row);

}  // namespace shardctl::schema
