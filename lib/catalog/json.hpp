// Catalog objects as JSON, with the stable keys scripts rely on (--format json).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "catalog/catalog.hpp"

namespace shardctl::catalog {

nlohmann::json to_json(const Shard& shard);
nlohmann::json to_json(const Map& map);
nlohmann::json to_json(const Mapping& mapping);
nlohmann::json to_json(const TableDef& table);
nlohmann::json to_json(const Xref& xref);

// A list of them as a JSON array, in its order (`shard list`, `table list`... --format json).
template <class Item>
nlohmann::json to_json(const std::vector<Item>& items) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  return out;
}

// What shardctl.route() adds to a key's answer, for the mapping `entry` of the loaded map
// (-1: unmapped): {"version", "is_point", "low", "high", "dsn"}. Bounds as route() gives them
// (man/shardctl-lookup.1): in the map's route space (hash values for hash maps), low inclusive,
// high exclusive, null unbounded; a point is low with high null. dsn: app_dsn, else dsn, redacted.
nlohmann::json route_json(const LoadedMap& loaded, std::int32_t entry);

// "10..20", "..5", or the point itself.
std::string mapping_key_text(const Mapping& mapping);

}  // namespace shardctl::catalog
