// Fixes are journaled in the catalog as finished operations (kind check-quarantine,
// check-delete, check-rehome, check-restore) whose args list every action, so `shardctl op
// list` shows who changed what and when. No schema change: operations.args holds the details.
#pragma once

#include <string>

#include "check/finding.hpp"
#include "journal/journal.hpp"
#include "pg/connection.hpp"

namespace shardctl::check {

// The operation kind a fix is journaled as: check-<the fix's word>.
journal::OperationKind fix_operation_kind(FixKind fix) noexcept;

// Records the report's fixes as one done operation; returns its id.
std::string journal_fixes(pg::Connection& catalog, FixKind fix, const Report& report);

}  // namespace shardctl::check
