// Plans and fleets as JSON: the plan file's body (the stats helper wraps it in an envelope with
// the map version and stats fingerprint), and fleets for benches, tests and debugging. Keys are
// written as routing::format_key of the map's bound type and read back with that type, so a
// plan round-trips exactly.
#pragma once

#include <nlohmann/json.hpp>

#include "planner/planner.hpp"

namespace shardctl::planner {

nlohmann::json to_json(const Plan& plan);
// Throws a data Error (exit 65) naming the field, e.g. "plan: steps[2].bytes: expected an integer".
Plan plan_from_json(const nlohmann::json& json);

nlohmann::json to_json(const Fleet& fleet);
Fleet fleet_from_json(const nlohmann::json& json);  // data Error naming the field

}  // namespace shardctl::planner
