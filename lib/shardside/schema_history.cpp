#include "shardside/schema_history.hpp"

#include "shardside/sql.hpp"

namespace shardctl::shardside {

void ensure_schema_history(shardio::RawConn& conn) {
  conn.script(std::string(sql::schema_history));
  auto first_shape = conn.query(
      "SELECT (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'shardctl.schema_history'::regclass "
      "AND attname = 'success' AND NOT attisdropped), "
      "NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'shardctl.schema_history'::regclass "
      "AND attname = 'note' AND NOT attisdropped)");
  if (!first_shape.empty() && (first_shape[0][0] == "t" || first_shape[0][1] == "t")) conn.script(std::string(sql::schema_history_2));
}

std::vector<SchemaHistoryRow> read_schema_history(shardio::RawConn& conn) {
  auto exists = conn.query("SELECT to_regclass('shardctl.schema_history') IS NOT NULL");
  if (exists.empty() || exists[0][0] != "t") return {};
  auto rows = conn.query(
      "SELECT id::text, coalesce(version, ''), version IS NULL, name, kind, coalesce(checksum, ''), "
      "applied_at::text, duration_ms::text, applied_by, coalesce(success::text, 'null') "
      "FROM shardctl.schema_history ORDER BY id");
  std::vector<SchemaHistoryRow> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    SchemaHistoryRow h;
    h.id = std::stoll(r[0]);
    if (r[2] != "t") h.version = r[1];
    h.name = r[3];
    h.kind = read_word<SchemaHistoryKind>(r[4]);
    h.checksum = r[5];
    h.applied_at = r[6];
    h.duration_ms = std::stoll(r[7]);
    h.applied_by = r[8];
    h.outcome = read_word<SchemaHistoryOutcome>(r[9]);
    out.push_back(std::move(h));
  }
  return out;
}

std::int64_t insert_schema_history(shardio::RawConn& conn, const NewSchemaHistoryRow& row) {
  // RawConn::query binds text parameters and has no NULL: NULLIF('') stands for it (and for an
  // unfinished attempt's success).
  auto r = conn.query(
      "INSERT INTO shardctl.schema_history (version, name, kind, checksum, duration_ms, success, note) "
      "VALUES (NULLIF($1, ''), $2, $3, NULLIF($4, ''), $5::bigint, NULLIF($6, '')::boolean, NULLIF($7, '')) "
      "RETURNING id::text",
      {row.version.value_or(""), row.name, std::string(to_text(row.kind)), row.checksum.value_or(""),
       std::to_string(row.duration_ms), row.outcome == SchemaHistoryOutcome::unfinished ? "" : std::string(to_text(row.outcome)),
       row.note});
  return std::stoll(r.at(0).at(0));
}

void finish_schema_history(shardio::RawConn& conn, std::int64_t id, bool success, std::int64_t duration_ms) {
  conn.query("UPDATE shardctl.schema_history SET success = $2::boolean, duration_ms = $3::bigint WHERE id = $1::bigint",
             {std::to_string(id), std::string(to_text(success ? SchemaHistoryOutcome::succeeded : SchemaHistoryOutcome::failed)),
              std::to_string(duration_ms)});
}

}  // namespace shardctl::shardside
