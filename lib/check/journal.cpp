#include "check/journal.hpp"

#include <nlohmann/json.hpp>

#include "journal/journal.hpp"

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
    id = journal::insert_done(tx, "check-" + action, args, progress);
  });
  return id;
}

}  // namespace shardctl::check
