// How schema results are shown: JSON documents (stable keys), text tables, JUnit test cases
// (one per shard and migration) for CI.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "output/junit.hpp"
#include "schema/rollout.hpp"

namespace shardctl::schema {

nlohmann::json to_json(const ApplyResult& r);
nlohmann::json to_json(const StatusMatrix& m);
nlohmann::json to_json(const BaselineResult& r);
nlohmann::json to_json(const RepairResult& r);

void print_apply(std::ostream& out, const ApplyResult& r);
void print_status(std::ostream& out, const StatusMatrix& m);
void print_baseline(std::ostream& out, const BaselineResult& r, bool dry_run);
void print_repair(std::ostream& out, const RepairResult& r);

// One progress line for a finished shard ("shard_1: ok at 5, 3 applied in 120 ms").
std::string progress_line(const ShardReport& r);

// Apply: for every shard, one case per migration file: applied now (with its duration), already
// applied (passed, 0 s), failed, or skipped (not reached). An unreachable or locked shard that
// ran nothing is one failed case named "connect" or "rollout lock".
std::vector<output::JunitCase> junit_cases(const ApplyResult& r, const std::vector<Migration>& migrations);
// Status: one case per shard and column; pending, failed and changed cells are failures.
std::vector<output::JunitCase> junit_cases(const StatusMatrix& m);

}  // namespace shardctl::schema
