// SQL about shardctl.operations rows that queries of several folders share. The journal
// (lib/journal) owns the rows and their statuses; this sits below it so that the catalog's own
// queries (a map's drop, a mapping's removal) use the same words.
#pragma once

#include <string>
#include <string_view>

namespace shardctl::catalog {

// The statuses an operation ends in (journal::is_over; tests/unit/test_journal_live_sql.cpp
// keeps the two in agreement). Any other status is a live operation: it still owns its keys.
inline constexpr std::string_view over_statuses = "('done', 'cancelled')";

// "ALIAS.status NOT IN (...)" / "ALIAS.status IN (...)"; no alias: "status ...".
inline std::string operation_is_live(std::string_view alias = "") {
  return (alias.empty() ? std::string() : std::string(alias) + ".") + "status NOT IN " + std::string(over_statuses);
}
inline std::string operation_is_over(std::string_view alias = "") {
  return (alias.empty() ? std::string() : std::string(alias) + ".") + "status IN " + std::string(over_statuses);
}

}  // namespace shardctl::catalog
