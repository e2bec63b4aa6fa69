// SQL predicates that select, on one shard, the rows whose key the map routes to that shard
// (or elsewhere), evaluated server-side with the same expressions as the migration's key
// filter: range bounds for range maps, PostgreSQL's extended hash for hash maps, points for
// list maps. Bounds are literals quoted by libpq, so the predicates also work inside COPY.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::check {

// Rows whose key any mapping of `map` satisfying `which` covers. "false" when none does.
std::string mapped_predicate(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                             const std::function<bool(const catalog::Mapping&)>& which);

// Rows the map routes to `shard`.
std::string routed_to(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                      const std::string& shard);

// Rows whose key lies in one of `ranges` (bounds of the map's route space). "false" when empty.
std::string in_ranges(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                      const std::vector<routing::KeyRange>& ranges);

// Rows stored on `shard` that belong elsewhere: a non-null key that no mapping to this shard
// covers, excluding keys of offline mappings and of ranges live operations work on (`in_flight`):
// an operation legitimately has copies of them on two shards until it purges its source.
std::string stray_predicate(shardio::RawConn& conn, const catalog::LoadedMap& map, const std::string& quoted_column,
                            const std::string& shard, const std::vector<routing::KeyRange>& in_flight);

}  // namespace shardctl::check
