// shardctl.schema_history on a shard: one row per attempt to apply a migration file (success
// or failure, or started and never finished), baseline rows and repair rows. Created on first
// use, under the rollout lock, and upgraded there from the shape earlier versions created.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schema/plan.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::schema {

// The rows in id order; empty when the table does not exist yet (nothing is created). Reads
// both shapes of the table (before and after ensure_history's upgrade).
std::vector<HistoryRow> read_history(shardio::RawConn& conn);

// CREATE SCHEMA / TABLE IF NOT EXISTS, and the upgrade of a table of the first shape (success
// NOT NULL, no note): `success` may be NULL (started, not finished) and `note` says why a row
// was written by hand (`schema repair`). The table's SQL is lib/shardside's
// (sql/schema_history*.sql). The shard may already have a `shardctl` schema (move guards live
// there); that is fine.
void ensure_history(shardio::RawConn& conn);

// The row as INSERT parameters.
struct NewRow {
  std::optional<std::string> version;
  std::string name;
  std::string kind;
  std::optional<std::string> checksum;
  std::int64_t duration_ms = 0;
  std::optional<bool> success = true;  // nullopt: started, outcome not known yet
  std::string note;                    // "" for none
};
// Runs on `conn` in whatever transaction state it is (inside the migration's transaction for
// a success, in autocommit for a failure or a start). Returns the row's id.
std::int64_t insert_history(shardio::RawConn& conn, const NewRow& row);

// Records how the attempt of row `id` (inserted as started) ended.
void finish_history(shardio::RawConn& conn, std::int64_t id, bool success, std::int64_t duration_ms);

}  // namespace shardctl::schema
