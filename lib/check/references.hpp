// check --references: every reference table's copies compared (lib/refdata), as findings.
#pragma once

#include <vector>

#include "catalog/catalog.hpp"
#include "check/check.hpp"

namespace shardctl::check {

// Adds reference_differs, reference_tie and reference_drift findings for the copies on
// `shards` to `report`, and the shards it could not read to report.unreachable.
void compare_references(pg::Connection& catalog, const std::vector<const catalog::Shard*>& shards, const Options& options,
                        Report& report);

}  // namespace shardctl::check
