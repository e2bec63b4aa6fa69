#include "check/journal.hpp"

#include <nlohmann/json.hpp>

#include "journal/journal.hpp"

namespace shardctl::check {

journal::OperationKind fix_operation_kind(FixKind fix) noexcept {
  switch (fix) {
    case FixKind::quarantine: return journal::OperationKind::check_quarantine;
    case FixKind::remove: return journal::OperationKind::check_delete;
    case FixKind::rehome: return journal::OperationKind::check_rehome;
    case FixKind::restore: return journal::OperationKind::check_restore;
  }
  return journal::OperationKind::check_quarantine;
}

std::string journal_fixes(pg::Connection& catalog, FixKind fix, const Report& report) {
  nlohmann::json actions = nlohmann::json::array();
  std::int64_t rows = 0;
  for (const auto& a : report.fixes) {
    actions.push_back({{"action", std::string(to_text(a.action))}, {"shard", a.shard}, {"table", a.table}, {"target", a.target},
                       {"rows", a.rows}, {"detail", a.detail}});
    rows += a.rows;
  }
  nlohmann::json args = {{"fix", std::string(to_text(fix))}, {"actions", actions}};
  nlohmann::json progress = {{"rows", rows}};
  std::string id;
  catalog.transact([&](pqxx::work& tx) {
    id = journal::insert_done(tx, fix_operation_kind(fix), args, progress);
  });
  return id;
}

}  // namespace shardctl::check
