#include "archive/run_journal.hpp"

#include <ostream>

#include "catalog/names.hpp"
#include "journal/journal.hpp"

namespace shardctl::archive {

namespace {

// A state or step as a statement's parameter.
std::string word(ShardState s) { return std::string(to_text(s)); }
std::string word(BatchStep s) { return std::string(to_text(s)); }

std::optional<std::string> array_param(const std::optional<KeyValues>& v) {
  if (!v) return std::nullopt;
  return catalog::text_array_literal(*v);
}

std::optional<KeyValues> array_field(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return nlohmann::json::parse(f.as<std::string>()).get<KeyValues>();
}

}  // namespace

std::string insert_run(pqxx::work& tx, const Job& job, const nlohmann::json& tables,
                       const std::vector<std::pair<std::int64_t, std::optional<KeyValues>>>& upper) {
  nlohmann::json args = to_json(job);
  args["tables"] = tables;
  std::string id =
      journal::insert_running(tx, journal::OperationKind::archive, args, static_cast<int>(std::min<std::int64_t>(job.batch_size, 2147483647)));
  for (const auto& [shard_id, up] : upper)
    tx.exec_params("INSERT INTO shardctl.archive_shards (op_id, shard_id, upper_key, state) VALUES ($1, $2, $3::text[], $4)",
                   id, shard_id, array_param(up), word(up ? ShardState::pending : ShardState::done));
  return id;
}

std::vector<ShardRunState> run_shards(pqxx::work& tx, const std::string& run) {
  std::vector<ShardRunState> out;
  for (const auto& r : tx.exec_params(
           "SELECT a.shard_id, s.name, array_to_json(a.upper_key)::text, array_to_json(a.cursor_key)::text, a.state, "
           "a.batches_done, a.rows::text, a.refused FROM shardctl.archive_shards a JOIN shardctl.shards s USING (shard_id) "
           "WHERE a.op_id = $1 ORDER BY s.name",
           run)) {
    ShardRunState s;
    s.shard_id = r[0].as<std::int64_t>();
    s.shard = r[1].as<std::string>();
    s.upper = array_field(r[2]);
    s.cursor = array_field(r[3]);
    s.state = read_word<ShardState>(r[4].as<std::string>());
    s.batches_done = r[5].as<int>();
    s.rows = nlohmann::json::parse(r[6].as<std::string>());
    s.refused = r[7].as<std::int64_t>();
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<BatchState> pending_batch(pqxx::work& tx, const std::string& run, std::int64_t shard_id) {
  auto r = tx.exec_params("SELECT batch_no, array_to_json(low_key)::text, array_to_json(high_key)::text, "
                          "to_char(archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), step, tables::text "
                          "FROM shardctl.archive_batches WHERE op_id = $1 AND shard_id = $2 AND step <> $3 "
                          "ORDER BY batch_no LIMIT 1",
                          run, shard_id, word(BatchStep::deleted));
  if (r.empty()) return std::nullopt;
  BatchState b;
  b.batch_no = r[0][0].as<int>();
  b.low = array_field(r[0][1]);
  b.high = *array_field(r[0][2]);
  b.archived_at = r[0][3].as<std::string>();
  b.step = read_word<BatchStep>(r[0][4].as<std::string>());
  b.tables = nlohmann::json::parse(r[0][5].as<std::string>());
  return b;
}

BatchState insert_batch(pqxx::work& tx, const std::string& run, std::int64_t shard_id, const std::optional<KeyValues>& low,
                        const KeyValues& high) {
  // clock_timestamp(), not now(): two batches of one shard in one transaction would share now().
  auto r = tx.exec_params1(
      "INSERT INTO shardctl.archive_batches (op_id, shard_id, batch_no, low_key, high_key, archived_at) "
      "SELECT $1, $2, coalesce(max(batch_no), 0) + 1, $3::text[], $4::text[], date_trunc('microseconds', clock_timestamp()) "
      "FROM shardctl.archive_batches WHERE op_id = $1 AND shard_id = $2 "
      "RETURNING batch_no, to_char(archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
      run, shard_id, array_param(low), catalog::text_array_literal(high));
  tx.exec_params("UPDATE shardctl.archive_shards SET state = $3, updated_at = now() WHERE op_id = $1 AND shard_id = $2",
                 run, shard_id, word(ShardState::running));
  BatchState b;
  b.batch_no = r[0].as<int>();
  b.low = low;
  b.high = high;
  b.archived_at = r[1].as<std::string>();
  b.step = BatchStep::selected;
  return b;
}

void mark_delivered(pqxx::work& tx, const std::string& run, std::int64_t shard_id, int batch_no,
                    const nlohmann::json& tables) {
  tx.exec_params("UPDATE shardctl.archive_batches SET step = $5, tables = $4::jsonb, updated_at = now() "
                 "WHERE op_id = $1 AND shard_id = $2 AND batch_no = $3",
                 run, shard_id, batch_no, tables.dump(), word(BatchStep::delivered));
}

void mark_deleted(pqxx::work& tx, const std::string& run, std::int64_t shard_id, const BatchState& batch,
                  const nlohmann::json& tables, std::int64_t refused) {
  auto cur = tx.exec_params1("SELECT rows::text FROM shardctl.archive_shards WHERE op_id = $1 AND shard_id = $2 FOR UPDATE",
                             run, shard_id);
  auto rows = nlohmann::json::parse(cur[0].as<std::string>());
  for (const auto& [table, stats] : tables.items())
    rows[table] = rows.value(table, std::int64_t{0}) + stats.value("rows", std::int64_t{0});
  tx.exec_params("UPDATE shardctl.archive_batches SET step = $5, tables = $4::jsonb, updated_at = now() "
                 "WHERE op_id = $1 AND shard_id = $2 AND batch_no = $3",
                 run, shard_id, batch.batch_no, tables.dump(), word(BatchStep::deleted));
  tx.exec_params("UPDATE shardctl.archive_shards SET cursor_key = $3::text[], batches_done = batches_done + 1, "
                 "rows = $4::jsonb, refused = refused + $5, updated_at = now() WHERE op_id = $1 AND shard_id = $2",
                 run, shard_id, catalog::text_array_literal(batch.high), rows.dump(), refused);
}

void mark_shard_done(pqxx::work& tx, const std::string& run, std::int64_t shard_id) {
  tx.exec_params("UPDATE shardctl.archive_shards SET state = $3, updated_at = now() WHERE op_id = $1 AND shard_id = $2",
                 run, shard_id, word(ShardState::done));
}

std::optional<std::string> unfinished_run(pqxx::work& tx, const std::string& name) {
  auto r = tx.exec_params("SELECT op_id::text FROM shardctl.operations WHERE kind = $2 AND args ->> 'job' = $1 "
                          "AND status NOT IN ($3, $4) ORDER BY created_at DESC LIMIT 1",
                          name, std::string(journal::to_text(journal::OperationKind::archive)),
                          std::string(journal::to_text(journal::OperationStatus::done)),
                          std::string(journal::to_text(journal::OperationStatus::cancelled)));
  if (r.empty()) return std::nullopt;
  return r[0][0].as<std::string>();
}

}  // namespace shardctl::archive
