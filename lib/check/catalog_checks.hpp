// The catalog side of --map-consistency: overlapping and unmapped key space, mappings to
// unknown/offline/readonly shards, offline mappings no live operation owns, guards recorded
// for operations that are over, and operations whose lease expired with no runner left.
#pragma once

#include <vector>

#include "check/finding.hpp"
#include "check/fleet.hpp"
#include "pg/connection.hpp"

namespace shardctl::check {

std::vector<Finding> catalog_findings(pg::Connection& catalog, const Fleet& fleet);

}  // namespace shardctl::check
