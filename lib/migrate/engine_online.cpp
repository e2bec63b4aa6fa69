// The Engine's part of online moves: what --online needs of the shards, checked before anything
// changes, and new settings for a resumed online operation.
#include <set>

#include "core/error.hpp"
#include "journal/journal.hpp"

#include "migrate/operation.hpp"
#include "pg/dsn.hpp"
#include "shardside/replication.hpp"
#include "shardside/subscription_probe.hpp"

namespace shardctl::migrate {

namespace {

// The target's server must reach each source with the connection string its subscription will
// use (the source's replication DSN, else its DSN: runner_online.cpp), which may work from here
// and not from there. Unreachable (69) before anything is created, naming that string.
void require_subscribable(shardio::RawConn& target, const catalog::Shard& to, const catalog::Shard& from) {
  auto error = shardside::subscription_connect_error(target, from.subscription_dsn());
  if (!error) return;
  const std::string which = from.replication_dsn ? "its replication DSN" : "its DSN";
  throw unavailable_error(
      "the server of shard " + to.name + " cannot reach shard " + from.name + " with " + which + " (" +
          pg::describe_dsn(from.subscription_dsn()) + ") to subscribe to it: " + *error,
      "an online move's subscription connects from the target's server, not from shardctl's host: "
      "`shardctl shard set " + from.name + " --replication-dsn DSN` gives it a connection string that works there "
      "(host, port, pg_hba.conf; a password in that server's OS user's ~/.pgpass)" +
          (from.replication_dsn ? ", `--replication-dsn ''` removes it" : std::string()));
}

}  // namespace

void Engine::check_online(const Plan& plan) {
  std::vector<shardside::MovingTable> tables;
  for (const auto& t : plan.tables) tables.push_back({t.quoted, {t.key_column}});
  // One stream at a time per source: batches cut over one after another.
  std::set<std::int64_t> seen;
  std::vector<const catalog::Shard*> sources;
  for (const auto& seg : plan.segments) {
    if (!seen.insert(seg.source.id).second) continue;
    shardio::RawConn source(seg.source.dsn, "shard " + seg.source.name);
    shardside::check_source(source, tables, 1).require();
    sources.push_back(&seg.source);
  }
  shardio::RawConn target(plan.target.dsn, "shard " + plan.target.name);
  shardside::check_target(target, 1).require();
  for (const auto* from : sources) require_subscribable(target, plan.target, *from);
}

void Engine::retune_online(const std::string& op_id, std::optional<double> max_lag_seconds, std::optional<int> cutover_timeout_ms) {
  if (!max_lag_seconds && !cutover_timeout_ms) return;
  catalog_.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params("SELECT args::text FROM shardctl.operations WHERE op_id::text = $1 FOR UPDATE", op_id);
    if (r.empty()) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
    auto args = nlohmann::json::parse(r[0][0].as<std::string>());
    auto online = online_from_args(args);
    if (!online)
      throw usage_error("operation " + op_id + " is not an online move: --max-lag and --cutover-timeout apply to online moves only",
                        "resume it without them");
    if (max_lag_seconds) online->max_lag_seconds = *max_lag_seconds;
    if (cutover_timeout_ms) online->cutover_timeout_ms = *cutover_timeout_ms;
    args["online"] = online_json(*online);
    tx.exec_params("UPDATE shardctl.operations SET args = $2::jsonb WHERE op_id::text = $1", op_id, args.dump());
  });
}

void Engine::check_cancellable(const std::string& op_id) {
  if (!journal::is_operation_id(op_id)) return;  // journal::request_cancel() names the mistake
  catalog_.transact([&](pqxx::work& tx) {
    // The operation's row first, as the runner's own catalog writes lock it: a flip cannot
    // land between this read and the answer.
    tx.exec_params("SELECT 1 FROM shardctl.operations WHERE op_id::text = $1 FOR UPDATE", op_id);
    auto r = tx.exec_params(
        "SELECT o.args::text, o.status, coalesce(t.name, ''), "
        "       count(b.batch_no), count(b.batch_no) FILTER (WHERE b.step IN ('flipped', 'done')) "
        "FROM shardctl.operations o LEFT JOIN shardctl.op_batches b USING (op_id) "
        "LEFT JOIN shardctl.shards t ON t.shard_id = o.target_shard_id "
        "WHERE o.op_id::text = $1 GROUP BY o.op_id, t.name",
        op_id);
    if (r.empty()) return;
    if (!online_from_args(nlohmann::json::parse(r[0][0].as<std::string>()))) return;
    if (journal::is_over(read_word<journal::OperationStatus>(r[0][1].as<std::string>()))) return;
    auto batches = r[0][3].as<std::int64_t>(), flipped = r[0][4].as<std::int64_t>();
    if (batches == 0 || flipped < batches) return;
    throw usage_error("operation " + op_id + " has flipped every batch: the map routes its keys to " + r[0][2].as<std::string>() +
                          ", where applications already write, and a cancel cannot take that back",
                      "`shardctl op resume " + op_id + "` finishes it; to undo it, move the keys back with a new operation");
  });
}

}  // namespace shardctl::migrate
