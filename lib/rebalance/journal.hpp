// The apply journal in the catalog: one rebalance_runs row per plan (by its fingerprint), one
// rebalance_steps row per step with the operation that runs it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/words.hpp"
#include "pg/connection.hpp"

namespace shardctl::rebalance {

// A step's status in shardctl.rebalance_steps; the catalog's words, text only in this table (a
// value out of range prints as pending).
enum class StepStatus { pending, running, done, failed };
inline constexpr auto step_status_words =
    words<StepStatus>(
        {{StepStatus::pending, "pending"}, {StepStatus::running, "running"}, {StepStatus::done, "done"}, {StepStatus::failed, "failed"}})
        .otherwise("pending")
        .stored_as("rebalance step status", "shardctl.rebalance_steps");
constexpr const auto& words_of(StepStatus) noexcept { return step_status_words; }
using shardctl::operator<<;
using shardctl::to_text;

struct JournalStep {
  StepStatus status = StepStatus::pending;
  std::string op_id;               // empty: none started
};

bool run_exists(pg::Connection& catalog, const std::string& fingerprint);
// Records the run and its `steps` pending rows (idempotent).
void begin_run(pg::Connection& catalog, const std::string& fingerprint, const nlohmann::json& plan, std::size_t steps);
std::vector<JournalStep> read_steps(pg::Connection& catalog, const std::string& fingerprint, std::size_t steps);
void set_step(pg::Connection& catalog, const std::string& fingerprint, std::size_t step, StepStatus status,
              const std::string& op_id, const std::string& error = {});
void finish_run(pg::Connection& catalog, const std::string& fingerprint);
// The newest operation journaled for this plan's step (its args carry {"rebalance": {plan, step}}):
// finds an operation started by an apply killed before it journaled the operation's id.
std::optional<std::string> find_step_operation(pg::Connection& catalog, const std::string& fingerprint, std::size_t step);

}  // namespace shardctl::rebalance
