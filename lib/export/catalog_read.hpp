// What `shardctl export` reads from the catalog: the shards to export, every one or those a
// map's mappings point at, by name. Kept apart from the rendering (pgbouncer.hpp), which is pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "export/pgbouncer.hpp"

namespace shardctl::exporter {

// Every shard, whatever its status (an entry must exist before a shard comes back online), or
// the shards `map` uses; a usage Error (64) for an unknown map.
std::vector<ShardDsn> shards_to_export(catalog::Store& store, const std::optional<std::string>& map);

}  // namespace shardctl::exporter
