#include "export/catalog_read.hpp"

#include <set>

namespace shardctl::exporter {

std::vector<ShardDsn> shards_to_export(catalog::Store& store, const std::optional<std::string>& map) {
  std::set<std::string> used;
  if (map)
    for (const auto& m : store.list_mappings(*map)) used.insert(m.shard);  // usage Error when the map is unknown
  std::vector<ShardDsn> out;
  for (const auto& s : store.list_shards())
    if (!map || used.count(s.name)) out.push_back({s.name, s.dsn});
  return out;
}

}  // namespace shardctl::exporter
