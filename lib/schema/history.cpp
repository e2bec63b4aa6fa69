#include "schema/history.hpp"

namespace shardctl::schema {

std::vector<HistoryRow> read_history(shardio::RawConn& conn) {
  auto exists = conn.query("SELECT to_regclass('shardctl.schema_history') IS NOT NULL");
  if (exists.empty() || exists[0][0] != "t") return {};
  auto rows = conn.query(
      "SELECT id::text, coalesce(version, ''), version IS NULL, name, kind, coalesce(checksum, ''), "
      "applied_at::text, duration_ms::text, applied_by, coalesce(success::text, 'null') "
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
    h.success = r[9] == "true";
    h.unfinished = r[9] == "null";
    out.push_back(std::move(h));
  }
  return out;
}

void ensure_history(shardio::RawConn& conn) {
  // One row per attempt; failures stay as the audit trail and a later success of the same file
  // closes them. `checksum` is "<algorithm>:<hex>" so another algorithm can follow. `success`
  // NULL: a no-transaction file started and has not (or never) recorded its outcome.
  conn.script(
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
      " success boolean,"
      " note text,"
      " CHECK ((kind = 'repeatable') = (version IS NULL)))");
  // The first shape had `success boolean NOT NULL` and no `note`. Upgraded in place (under the
  // rollout lock; ALTER TABLE only when needed, so a current table is never locked for it).
  // Earlier versions still read the upgraded table: to them an unfinished row looks failed.
  auto old = conn.query(
      "SELECT (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'shardctl.schema_history'::regclass "
      "AND attname = 'success' AND NOT attisdropped), "
      "NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'shardctl.schema_history'::regclass "
      "AND attname = 'note' AND NOT attisdropped)");
  if (!old.empty() && (old[0][0] == "t" || old[0][1] == "t"))
    conn.exec(
        "ALTER TABLE shardctl.schema_history ALTER COLUMN success DROP NOT NULL, "
        "ADD COLUMN IF NOT EXISTS note text");
}

std::int64_t insert_history(shardio::RawConn& conn, const NewRow& row) {
  // RawConn::query binds text parameters and has no NULL: NULLIF('') stands for it.
  auto r = conn.query(
      "INSERT INTO shardctl.schema_history (version, name, kind, checksum, duration_ms, success, note) "
      "VALUES (NULLIF($1, ''), $2, $3, NULLIF($4, ''), $5::bigint, NULLIF($6, '')::boolean, NULLIF($7, '')) "
      "RETURNING id::text",
      {row.version.value_or(""), row.name, row.kind, row.checksum.value_or(""), std::to_string(row.duration_ms),
       row.success ? (*row.success ? "true" : "false") : "", row.note});
  return std::stoll(r.at(0).at(0));
}

void finish_history(shardio::RawConn& conn, std::int64_t id, bool success, std::int64_t duration_ms) {
  conn.query("UPDATE shardctl.schema_history SET success = $2::boolean, duration_ms = $3::bigint WHERE id = $1::bigint",
             {std::to_string(id), success ? "true" : "false", std::to_string(duration_ms)});
}

}  // namespace shardctl::schema
