// `rebalance apply PLAN.json`: runs a plan's steps as migration operations through
// migrate::Engine, journaled in shardctl.rebalance_runs/rebalance_steps so that a killed apply,
// run again with the same file, continues at its first unfinished step.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "migrate/operation.hpp"
#include "pg/connection.hpp"
#include "rebalance/plan_file.hpp"

namespace shardctl::rebalance {

struct ApplyOptions {
  int parallel = 1;  // steps at once; never two operations on one shard
  std::optional<std::chrono::milliseconds> max_age;  // refuse stats older than this (none: no limit)
  bool dry_run = false;
  int batch_size = 1000;
  migrate::EngineOptions engine;
  std::string catalog_dsn;  // each parallel step opens its own catalog connection
  std::function<void(const std::string&)> note;  // progress lines
};

struct StepResult {
  std::size_t step = 0;  // 1-based
  std::string kind, map, from, to, range;
  std::string command;   // what the step runs, as a shardctl command line
  std::string op_id;
  std::string status;    // done | skipped (already done) | would run | failed | pending
  std::string error;
  std::int64_t rows = 0;
};

struct ApplyResult {
  std::string fingerprint;
  bool resumed = false;
  std::vector<StepResult> steps;
};

nlohmann::json to_json(const ApplyResult& r);

// Throws a data Error (65) when a map changed since planning or the stats are older than
// max_age (both checked only when the plan has not started yet: its own steps change the map).
ApplyResult apply(pg::Connection& catalog, const PlanFile& plan, const ApplyOptions& options);

}  // namespace shardctl::rebalance
