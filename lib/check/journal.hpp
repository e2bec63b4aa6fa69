// Fixes are journaled in the catalog as finished operations (kind check-quarantine,
// check-delete, check-rehome, check-restore) whose args list every action, so `shardctl op
// list` shows who changed what and when. No schema change: operations.args holds the details.
#pragma once

#include <string>

#include "check/finding.hpp"
#include "pg/connection.hpp"

namespace shardctl::check {

// Records the report's fixes as one done operation; returns its id.
std::string journal_fixes(pg::Connection& catalog, const std::string& action, const Report& report);

}  // namespace shardctl::check
