// The plan file `rebalance plan -o PLAN.json` writes and `rebalance apply` reads: the planner's
// plan wrapped with what it was made from, so apply can refuse it once that changed.
//   {"format": "shardctl-rebalance-plan", "format_version": 1, "created_at": ...,
//    "maps": [{"name": M, "version": V}],              versions when planned
//    "stats": {"snapshot_id": N, "fingerprint": F, "taken_at": T},
//    "options": {...},                                 what the plan was asked for
//    "plan": planner::to_json(plan)}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/planner.hpp"

namespace shardctl::rebalance {

struct MapVersion {
  std::string name;
  std::int64_t version = 0;
};

struct PlanFile {
  std::vector<MapVersion> maps;
  std::int64_t snapshot_id = 0;
  std::string snapshot_fingerprint;
  std::string taken_at;
  nlohmann::json options;
  planner::Plan plan;
  std::string fingerprint;  // SHA-256 of the file's JSON: identifies the plan in the apply journal
};

nlohmann::json to_json(const PlanFile& f);
// Reads and checks a plan file; anything malformed is a data Error (65) naming the file.
PlanFile read_plan_file(const std::string& path);
// The fingerprint of a plan file's JSON (as to_json gives it, without "fingerprint").
std::string plan_fingerprint(const nlohmann::json& doc);

}  // namespace shardctl::rebalance
