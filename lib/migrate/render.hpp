// Text rendering of operations and plans, shared by the split and op commands.
#pragma once

#include <ostream>

#include "migrate/operation.hpp"

namespace shardctl::migrate {

void print_plan(std::ostream& out, const Plan& plan);
// The plan as printed by `--dry-run --format json`.
nlohmann::json plan_json(const Plan& plan);
void print_status(std::ostream& out, const journal::OpStatus& op);
// A one-line progress report for a terminal ("\r" refreshed).
std::string progress_line(const Progress& p, double seconds);

}  // namespace shardctl::migrate
