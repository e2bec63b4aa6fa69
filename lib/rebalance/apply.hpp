// `rebalance apply PLAN.json`: runs a plan's steps as migration operations through
// migrate::Engine, journaled in shardctl.rebalance_runs/rebalance_steps so that a killed apply,
// run again with the same file, continues at its first unfinished step.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/words.hpp"
#include "migrate/operation.hpp"
#include "pg/connection.hpp"
#include "rebalance/plan_file.hpp"

namespace shardctl::rebalance {

struct ApplyOptions {
  int parallel = 1;  // steps at once; never two operations on one shard
  std::optional<std::chrono::milliseconds> max_age;  // refuse stats older than this (none: no limit)
  bool dry_run = false;
  // --batch-size: distinct keys per batch; none: batches of about migrate::default_batch_bytes,
  // as split, merge and move batch without it.
  std::optional<int> batch_keys;
  // --online: every step runs as an online move (migrate/online.hpp), checked for it first.
  std::optional<migrate::OnlineSettings> online;
  migrate::EngineOptions engine;
  std::string catalog_dsn;  // each parallel step opens its own catalog connection
  std::function<void(const std::string&)> note;  // progress lines
};

// What became of a step in this apply: done, skipped (already done, or nothing changes shard),
// failed, pending (not reached); with --dry-run, what would become of it.
// Their words (`rebalance apply` text and JSON; status_text adds would_run_after's step).
enum class StepOutcome { pending, skipped, done, failed, would_run, would_resume, would_run_after, would_fail };
inline constexpr auto step_outcome_words =
    words<StepOutcome>({{StepOutcome::pending, "pending"}, {StepOutcome::skipped, "skipped"}, {StepOutcome::done, "done"},
                        {StepOutcome::failed, "failed"}, {StepOutcome::would_run, "would run"},
                        {StepOutcome::would_resume, "would resume"}, {StepOutcome::would_run_after, "would run after step"},
                        {StepOutcome::would_fail, "would fail"}})
        .otherwise("pending");
constexpr const auto& words_of(StepOutcome) noexcept { return step_outcome_words; }
using shardctl::operator<<;
using shardctl::to_text;

struct StepResult {
  std::size_t step = 0;  // 1-based
  std::string kind, map, from, to, range;
  std::string command;   // what the step runs, as a shardctl command line (batched the same way)
  std::string op_id;
  StepOutcome status = StepOutcome::pending;
  std::size_t after = 0;  // would_run_after: the step (1-based) it waits for
  std::string error;
  std::int64_t rows = 0;  // moved; with --dry-run, the rows the preview found to move
  int batches = 0;        // --dry-run: batches the preview planned
};

struct ApplyResult {
  std::string fingerprint;
  bool resumed = false;
  std::vector<StepResult> steps;
  // --dry-run: the first step whose preview failed (its Error, with kind and hint), rethrown by
  // the caller once it has shown every step.
  std::exception_ptr preview_error;
};

// The outcome as text and JSON show it: "done", "would run after step 2", ...
std::string status_text(const StepResult& s);
nlohmann::json to_json(const ApplyResult& r);

// Throws a data Error (65) when a map changed since planning or the stats are older than
// max_age (both checked only when the plan has not started yet: its own steps change the map).
// With dry_run it changes nothing: each step still to run is previewed as `merge --dry-run` /
// `move --dry-run` preview it (every precondition, batch planning, the start's checks), an
// interrupted one as `op resume --dry-run` does; a step whose range an earlier unfinished step
// of the same map also covers cannot be previewed before that step ran ("would run after").
ApplyResult apply(pg::Connection& catalog, const PlanFile& plan, const ApplyOptions& options);

}  // namespace shardctl::rebalance
