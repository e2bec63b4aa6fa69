#include "schema/history.hpp"

#include <libpq-fe.h>

#include <memory>

namespace shardctl::schema {

std::vector<HistoryRow> read_history(shardio::RawConn& conn) {
  auto exists = conn.query("SELECT to_regclass('shardctl.schema_history') IS NOT NULL");
  if (exists.empty() || exists[0][0] != "t") return {};
  auto rows = conn.query(
      "SELECT id::text, coalesce(version, ''), version IS NULL, name, kind, coalesce(checksum, ''), "
      "applied_at::text, duration_ms::text, applied_by, success "
      "FROM shardctl.schema_history ORDER BY id");
  std::vector<HistoryRow> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    HistoryRow h;
    h.id = std::stoll(r[0]);
    if (r[2] != "t") h.version = r[1];
    h.name = r[3];
    h.kind = r[4];
    h.checksum = r[5];
    h.applied_at = r[6];
    h.duration_ms = std::stoll(r[7]);
    h.applied_by = r[8];
    h.success = r[9] == "t";
    out.push_back(std::move(h));
  }
  return out;
}

void ensure_history(shardio::RawConn& conn) {
  // One row per attempt; failures stay as the audit trail and a later success of the same file
  // closes them. `checksum` is "<algorithm>:<hex>" so another algorithm can follow.
  conn.exec(
      "CREATE SCHEMA IF NOT EXISTS shardctl;"
      "CREATE TABLE IF NOT EXISTS shardctl.schema_history ("
      " id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
      " version text,"
      " name text NOT NULL,"
      " kind text NOT NULL CHECK (kind IN ('versioned', 'repeatable', 'baseline')),"
      " checksum text,"
      " applied_at timestamptz NOT NULL DEFAULT now(),"
      " duration_ms bigint NOT NULL DEFAULT 0,"
      " applied_by text NOT NULL DEFAULT current_user,"
      " success boolean NOT NULL,"
      " CHECK ((kind = 'repeatable') = (version IS NULL)))");
}

void insert_history(shardio::RawConn& conn, const NewRow& row) {
  // RawConn::query binds text parameters and has no NULL: NULLIF('') stands for it.
  conn.query(
      "INSERT INTO shardctl.schema_history (version, name, kind, checksum, duration_ms, success) "
      "VALUES (NULLIF($1, ''), $2, $3, NULLIF($4, ''), $5::bigint, $6::boolean)",
      {row.version.value_or(""), row.name, row.kind, row.checksum.value_or(""), std::to_string(row.duration_ms),
       row.success ? "true" : "false"});
}

}  // namespace shardctl::schema
