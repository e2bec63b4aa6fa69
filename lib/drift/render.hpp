// `schema drift` output: the per-shard diff as text, one JSON document, or JUnit test cases
// (one per shard) for CI.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <vector>

#include "drift/drift.hpp"
#include "output/junit.hpp"

namespace shardctl::drift {

void print_text(std::ostream& out, const Report& report);
nlohmann::json to_json(const Report& report);
std::vector<output::JunitCase> junit_cases(const Report& report);

}  // namespace shardctl::drift
