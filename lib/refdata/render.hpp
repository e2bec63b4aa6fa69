// What `table sync-reference` did (or, with --dry-run, would do), for people and for scripts.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "refdata/sync.hpp"

namespace shardctl::refdata {

// Per shard and table: the counts, then up to `sample` keys of each kind of change.
void print_sync_text(std::ostream& out, const SyncReport& report, int sample);
nlohmann::json sync_to_json(const SyncReport& report);

}  // namespace shardctl::refdata
