// `rebalance plan` as text: the ordered steps, every shard's size and load before and after as
// terminal bars, the hot keys too big to move, and why planning stopped.
#pragma once

#include <ostream>

#include "planner/planner.hpp"

namespace shardctl::planner {

void print_text(std::ostream& out, const Plan& plan);

// "1.5 GB", "640 MB", "12 kB", "512 B" (powers of 1024, as PostgreSQL's pg_size_pretty).
std::string pretty_bytes(std::int64_t bytes);

}  // namespace shardctl::planner
