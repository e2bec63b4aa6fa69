#include "check/journal.hpp"

#include <nlohmann/json.hpp>

namespace shardctl::check {

std::string journal_fixes(pg::Connection& catalog, const std::string& action, const Report& report) {
  nlohmann::json actions = nlohmann::json::array();
  std::int64_t rows = 0;
  for (const auto& a : report.fixes) {
    actions.push_back({{"action", a.action}, {"shard", a.shard}, {"table", a.table}, {"target", a.target},
                       {"rows", a.rows}, {"detail", a.detail}});
    rows += a.rows;
  }
  nlohmann::json args = {{"fix", action}, {"actions", actions}};
  nlohmann::json progress = {{"rows", rows}};
  std::string id;
  catalog.transact([&](pqxx::work& tx) {
    id = tx.exec_params1("INSERT INTO shardctl.operations (op_id, kind, status, phase, args, progress, finished_at) "
                         "VALUES (gen_random_uuid(), $1, 'done', 'done', $2::jsonb, $3::jsonb, now()) RETURNING op_id::text",
                         "check-" + action, args.dump(), progress.dump())[0]
             .as<std::string>();
  });
  return id;
}

}  // namespace shardctl::check
