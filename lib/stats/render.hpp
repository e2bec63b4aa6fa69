// `stats show` as text: the snapshot's header, one row per shard, one row per mapping.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "stats/snapshot.hpp"

namespace shardctl::stats {

// 1536 -> "1.5 KiB"; bytes below 1 KiB as "N B".
std::string human_bytes(std::int64_t bytes);

void print_snapshot(std::ostream& out, const Snapshot& s);

}  // namespace shardctl::stats
