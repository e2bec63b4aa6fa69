#include "journal/journal.hpp"

#include <unistd.h>

#include <ostream>

#include "catalog/locks.hpp"
#include "routing/key.hpp"

namespace shardctl::journal {

namespace {

// How long a runner's lease lasts past its last heartbeat: once it runs out, a run killed without
// a word is "interrupted", resumable by another process. Every step renews it (heartbeat()).
constexpr int lease_seconds = 60;

constexpr const char* op_select =
    "SELECT o.op_id::text, o.kind, mp.name AS map, o.status, coalesce(o.phase, '') AS phase, "
    "coalesce(o.int_range::text, o.text_range::text, o.uuid_range::text, '') AS range, "
    "coalesce(s.name, (SELECT string_agg(DISTINCT sh.name, ',') FROM shardctl.op_batches b "
    "JOIN shardctl.shards sh ON sh.shard_id = b.source_shard_id WHERE b.op_id = o.op_id), "
    "(SELECT string_agg(sh.name, ',' ORDER BY sh.name) FROM shardctl.archive_shards a "
    "JOIN shardctl.shards sh USING (shard_id) WHERE a.op_id = o.op_id), '') AS source, "
    "coalesce(t.name, o.args ->> 'to', '') AS target, "
    // Archive runs journal their batches per shard (shardctl.archive_batches), migrations in op_batches.
    "(SELECT count(*) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) + "
    "(SELECT count(*) FROM shardctl.archive_batches b WHERE b.op_id = o.op_id) AS batches, "
    "(SELECT count(*) FROM shardctl.op_batches b WHERE b.op_id = o.op_id AND b.step = 'done') + "
    "(SELECT count(*) FROM shardctl.archive_batches b WHERE b.op_id = o.op_id AND b.step = 'deleted') AS batches_done, "
    "(SELECT coalesce(sum(rows_moved), 0) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) + "
    "(SELECT coalesce(sum((e.value ->> 'rows')::bigint), 0) FROM shardctl.archive_batches b, jsonb_each(b.tables) e "
    "WHERE b.op_id = o.op_id AND b.step = 'deleted') AS rows_moved, "
    "(SELECT coalesce(sum(keys) FILTER (WHERE b.step = 'done'), 0) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) AS keys_done, "
    "coalesce((o.progress ->> 'keys_total')::bigint, 0) AS keys_total, "
    "coalesce((o.progress ->> 'rows_total')::bigint, 0) AS rows_total, "
    "o.cancel_requested, coalesce(o.error, '') AS error, coalesce(o.lease_holder, '') AS lease_holder, "
    "o.created_at::text, o.updated_at::text, "
    // Offline windows of the batches that came back online (migrations journaled since v5).
    "(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM b.online_at - b.offline_at)) "
    "FROM shardctl.op_batches b WHERE b.op_id = o.op_id AND b.online_at IS NOT NULL) AS offline_median, "
    "(SELECT max(extract(epoch FROM b.online_at - b.offline_at))::float8 "
    "FROM shardctl.op_batches b WHERE b.op_id = o.op_id AND b.online_at IS NOT NULL) AS offline_max "
    "FROM shardctl.operations o LEFT JOIN shardctl.maps mp USING (map_id) "
    "LEFT JOIN shardctl.shards s ON s.shard_id = o.source_shard_id "
    "LEFT JOIN shardctl.shards t ON t.shard_id = o.target_shard_id ";

OpStatus op_from(const pqxx::row& r) {
  OpStatus o;
  o.id = r["op_id"].as<std::string>();
  o.kind = read_word<OperationKind>(r["kind"].as<std::string>());
  o.map = r["map"].is_null() ? "" : r["map"].as<std::string>();
  o.status = read_word<OperationStatus>(r["status"].as<std::string>());
  o.phase = r["phase"].as<std::string>();
  o.range = r["range"].as<std::string>();
  o.source = r["source"].as<std::string>();
  o.target = r["target"].as<std::string>();
  o.batches = r["batches"].as<int>();
  o.batches_done = r["batches_done"].as<int>();
  o.rows_moved = r["rows_moved"].as<std::int64_t>();
  o.rows_total = r["rows_total"].as<std::int64_t>();
  o.keys_done = r["keys_done"].as<std::int64_t>();
  o.keys_total = r["keys_total"].as<std::int64_t>();
  o.cancel_requested = r["cancel_requested"].as<bool>();
  o.error = r["error"].as<std::string>();
  o.lease_holder = r["lease_holder"].as<std::string>();
  o.created_at = r["created_at"].as<std::string>();
  o.updated_at = r["updated_at"].as<std::string>();
  if (!r["offline_median"].is_null()) o.offline_median_seconds = r["offline_median"].as<double>();
  if (!r["offline_max"].is_null()) o.offline_max_seconds = r["offline_max"].as<double>();
  return o;
}

// A "running" operation whose runner's session lock is free has no live process: it was
// killed or lost its catalog connection, and waits for `op resume`.
void mark_interrupted(pg::Connection& catalog, OpStatus& op) {
  if (op.status != OperationStatus::running) return;
  catalog.read([&](pqxx::work& tx) {
    if (runner_gone(tx, op.id)) op.status = OperationStatus::interrupted;
  });
}

}  // namespace

std::string holder_name() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

bool is_operation_id(const std::string& text) {
  routing::Uuid u;
  return routing::try_parse_uuid(text, u);
}

std::string insert_running(pqxx::work& tx, const NewOperation& op) {
  return tx.exec_params1("INSERT INTO shardctl.operations (op_id, kind, map_id, " + op.range_column +
                             ", args, status, phase, source_shard_id, target_shard_id, batch_size, lease_holder, "
                             "lease_until, heartbeat_at, progress) VALUES (gen_random_uuid(), $1, $2, " + op.range_ctor +
                             "($3, $4, $5), $6::jsonb, 'running', 'planned', $7, $8, $9, $10, "
                             "now() + make_interval(secs => $12), now(), $11::jsonb) RETURNING op_id::text",
                         std::string(to_text(op.kind)), op.map_id, op.claim.low, op.claim.high, op.claim.bounds, op.args.dump(), op.source_shard_id,
                         op.target_shard_id, op.batch_size, holder_name(), op.progress.dump(), lease_seconds)[0]
      .as<std::string>();
}

std::string insert_running(pqxx::work& tx, OperationKind kind, const nlohmann::json& args, int batch_size) {
  return tx.exec_params1("INSERT INTO shardctl.operations (op_id, kind, args, status, phase, batch_size, lease_holder, "
                         "lease_until, heartbeat_at) VALUES (gen_random_uuid(), $1, $2::jsonb, 'running', 'planned', $3, $4, "
                         "now() + make_interval(secs => $5), now()) RETURNING op_id::text",
                         std::string(to_text(kind)), args.dump(), batch_size, holder_name(), lease_seconds)[0]
      .as<std::string>();
}

std::string insert_done(pqxx::work& tx, OperationKind kind, const nlohmann::json& args,
                        const nlohmann::json& progress) {
  return tx.exec_params1("INSERT INTO shardctl.operations (op_id, kind, status, phase, args, progress, finished_at) "
                         "VALUES (gen_random_uuid(), $1, 'done', 'done', $2::jsonb, $3::jsonb, now()) RETURNING op_id::text",
                         std::string(to_text(kind)), args.dump(), progress.dump())[0]
      .as<std::string>();
}

bool try_lock_runner(pqxx::work& tx, const std::string& op_id) {
  return tx.exec_params1("SELECT pg_try_advisory_lock($1, hashtext($2))", catalog::lock_class, op_id)[0].as<bool>();
}

void unlock_runner(pqxx::work& tx, const std::string& op_id) {
  tx.exec_params("SELECT pg_advisory_unlock($1, hashtext($2))", catalog::lock_class, op_id);
}

bool runner_gone(pqxx::work& tx, const std::string& op_id) {
  // Taking the lock is the only way to test it; give it straight back.
  bool free = try_lock_runner(tx, op_id);
  if (free) unlock_runner(tx, op_id);
  return free;
}

std::int64_t take_over(pqxx::work& tx, const std::string& op_id) {
  return tx.exec_params1("UPDATE shardctl.operations SET status = 'running', error = NULL, lease_holder = $2, "
                         "lease_until = now() + make_interval(secs => $3), heartbeat_at = now(), "
                         "fencing_token = fencing_token + 1 WHERE op_id = $1 RETURNING fencing_token",
                         op_id, holder_name(), lease_seconds)[0]
      .as<std::int64_t>();
}

void check_fencing_token(pqxx::work& tx, const std::string& op_id, std::int64_t token) {
  auto r = tx.exec_params("SELECT fencing_token FROM shardctl.operations WHERE op_id = $1 FOR UPDATE", op_id);
  if (r.empty() || r[0][0].as<std::int64_t>() != token)
    throw locked_error("operation " + op_id + " was taken over by another process",
                       "this process stops without touching the map or any row");
}

void heartbeat(pqxx::work& tx, const std::string& op_id, const std::string& phase) {
  tx.exec_params("UPDATE shardctl.operations SET phase = $2, updated_at = now(), heartbeat_at = now(), "
                 "lease_until = now() + make_interval(secs => $3) WHERE op_id = $1",
                 op_id, phase, lease_seconds);
}

bool cancel_requested(pqxx::work& tx, const std::string& op_id) {
  return tx.exec_params1("SELECT cancel_requested FROM shardctl.operations WHERE op_id = $1", op_id)[0].as<bool>();
}

void mark_finished(pqxx::work& tx, const std::string& op_id, OperationStatus status) {
  tx.exec_params("UPDATE shardctl.operations SET status = $2, phase = $2, finished_at = now(), updated_at = now(), "
                 "lease_holder = NULL, lease_until = NULL WHERE op_id = $1",
                 op_id, std::string(to_text(status)));
}

void mark_failed(pqxx::work& tx, const std::string& op_id, const std::string& error, std::int64_t token) {
  tx.exec_params("UPDATE shardctl.operations SET status = 'failed', error = $2, lease_holder = NULL, updated_at = now() "
                 "WHERE op_id = $1 AND fencing_token = $3",
                 op_id, error, token);
}

Error failed(pg::Connection& catalog, const std::string& op_id, const Error& e, std::int64_t token,
             const std::string& what) {
  try {
    catalog.transact([&](pqxx::work& tx) { mark_failed(tx, op_id, e.what(), token); });
  } catch (...) {
    // The operation stays journaled as running; `op list` shows it interrupted once this process ends.
  }
  std::string resume = "`shardctl op resume " + op_id + "` continues where it stopped";
  // Hints raised below the journal name the operation's commands with a placeholder ID.
  std::string hint = e.hint();
  for (const char* verb : {"resume", "cancel", "wait"}) {
    std::string placeholder = std::string("`shardctl op ") + verb + " ID`";
    for (auto at = hint.find(placeholder); at != std::string::npos; at = hint.find(placeholder, at))
      hint.replace(at, placeholder.size(), std::string("`shardctl op ") + verb + " " + op_id + "`");
  }
  if (hint.empty())
    hint = resume;
  else if (e.kind() == ErrorKind::unavailable && hint.find("op resume") == std::string::npos)
    hint = "once the server is back, " + resume;  // a connection's own hint speaks of re-running
  return Error(e.kind(), std::string(e.what()) + " (" + what + " " + op_id + ")", hint);
}

nlohmann::json to_json(const OpStatus& o) {
  return {{"id", o.id},           {"kind", std::string(to_text(o.kind))},
          {"map", o.map},         {"status", std::string(to_text(o.status))},
          {"phase", o.phase},     {"range", o.range},
          {"source", o.source},   {"target", o.target},
          {"batches", o.batches}, {"batches_done", o.batches_done},
          {"rows_moved", o.rows_moved}, {"rows_total", o.rows_total},
          {"keys_done", o.keys_done},   {"keys_total", o.keys_total},
          {"cancel_requested", o.cancel_requested},
          {"error", o.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.error)},
          {"lease_holder", o.lease_holder.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.lease_holder)},
          {"created_at", o.created_at}, {"updated_at", o.updated_at},
          {"offline_median_seconds", o.offline_median_seconds ? nlohmann::json(*o.offline_median_seconds) : nlohmann::json(nullptr)},
          {"offline_max_seconds", o.offline_max_seconds ? nlohmann::json(*o.offline_max_seconds) : nlohmann::json(nullptr)}};
}

Error run_by_another(const OpStatus& op) {
  return locked_error("operation " + op.id + " is being run by " + (op.lease_holder.empty() ? "another process" : op.lease_holder),
                      "wait for it with `shardctl op wait " + op.id + "`");
}

std::optional<OpStatus> find_operation(pg::Connection& catalog, const std::string& op_id) {
  if (!is_operation_id(op_id)) throw usage_error("'" + op_id + "' is not an operation id", "`shardctl op list` shows them");
  std::optional<OpStatus> out;
  catalog.read([&](pqxx::work& tx) {
    auto r = tx.exec_params(std::string(op_select) + "WHERE o.op_id = $1", op_id);
    if (!r.empty()) out = op_from(r[0]);
  });
  if (out) mark_interrupted(catalog, *out);
  return out;
}

OpStatus operation_status(pg::Connection& catalog, const std::string& op_id) {
  auto out = find_operation(catalog, op_id);
  if (!out) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
  return *out;
}

std::vector<OpStatus> list_operations(pg::Connection& catalog) {
  std::vector<OpStatus> out;
  catalog.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec(std::string(op_select) + "ORDER BY o.created_at DESC")) out.push_back(op_from(r));
  });
  for (auto& op : out) mark_interrupted(catalog, op);
  return out;
}

void request_cancel(pg::Connection& catalog, const std::string& op_id) {
  if (!is_operation_id(op_id)) throw usage_error("'" + op_id + "' is not an operation id");
  catalog.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params("UPDATE shardctl.operations SET cancel_requested = true, updated_at = now() "
                            "WHERE op_id = $1 RETURNING status",
                            op_id);
    if (r.empty()) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
  });
}

}  // namespace shardctl::journal
