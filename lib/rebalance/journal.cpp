#include "rebalance/journal.hpp"

namespace shardctl::rebalance {

bool run_exists(pg::Connection& catalog, const std::string& fingerprint) {
  bool found = false;
  catalog.read([&](pqxx::work& tx) {
    found = !tx.exec_params("SELECT 1 FROM shardctl.rebalance_runs WHERE plan_fingerprint = $1", fingerprint).empty();
  });
  return found;
}

void begin_run(pg::Connection& catalog, const std::string& fingerprint, const nlohmann::json& plan, std::size_t steps) {
  catalog.transact([&](pqxx::work& tx) {
    tx.exec_params("INSERT INTO shardctl.rebalance_runs (plan_fingerprint, plan) VALUES ($1, $2::jsonb) ON CONFLICT DO NOTHING",
                   fingerprint, plan.dump());
    tx.exec_params(
        "INSERT INTO shardctl.rebalance_steps (plan_fingerprint, step_no) SELECT $1, g FROM generate_series(1, $2::int) g "
        "ON CONFLICT DO NOTHING",
        fingerprint, static_cast<int>(steps));
  });
}

std::vector<JournalStep> read_steps(pg::Connection& catalog, const std::string& fingerprint, std::size_t steps) {
  std::vector<JournalStep> out(steps);
  catalog.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec_params(
             "SELECT step_no, status, coalesce(op_id::text, '') FROM shardctl.rebalance_steps WHERE plan_fingerprint = $1", fingerprint)) {
      auto i = r[0].as<std::size_t>();
      if (i < 1 || i > steps) continue;
      out[i - 1] = JournalStep{read_word<StepStatus>(r[1].as<std::string>()), r[2].as<std::string>()};
    }
  });
  return out;
}

void set_step(pg::Connection& catalog, const std::string& fingerprint, std::size_t step, StepStatus status,
              const std::string& op_id, const std::string& error) {
  catalog.transact([&](pqxx::work& tx) {
    std::optional<std::string> op = op_id.empty() ? std::nullopt : std::optional<std::string>(op_id);
    std::optional<std::string> err = error.empty() ? std::nullopt : std::optional<std::string>(error);
    tx.exec_params(
        "UPDATE shardctl.rebalance_steps SET status = $3, op_id = coalesce($4::uuid, op_id), error = $5, updated_at = now() "
        "WHERE plan_fingerprint = $1 AND step_no = $2",
        fingerprint, static_cast<int>(step), std::string(to_text(status)), op, err);
  });
}

void finish_run(pg::Connection& catalog, const std::string& fingerprint) {
  catalog.transact([&](pqxx::work& tx) {
    tx.exec_params("UPDATE shardctl.rebalance_runs SET finished_at = coalesce(finished_at, now()) WHERE plan_fingerprint = $1",
                   fingerprint);
  });
}

std::optional<std::string> find_step_operation(pg::Connection& catalog, const std::string& fingerprint, std::size_t step) {
  std::optional<std::string> out;
  catalog.read([&](pqxx::work& tx) {
    auto r = tx.exec_params(
        "SELECT op_id::text FROM shardctl.operations WHERE args->'rebalance'->>'plan' = $1 "
        "AND (args->'rebalance'->>'step')::int = $2 ORDER BY created_at DESC LIMIT 1",
        fingerprint, static_cast<int>(step));
    if (!r.empty()) out = r[0][0].as<std::string>();
  });
  return out;
}

}  // namespace shardctl::rebalance
