// Catalog objects as JSON, with the stable keys scripts rely on (--format json).
#pragma once

#include <nlohmann/json.hpp>

#include "catalog/catalog.hpp"

namespace shardctl::catalog {

nlohmann::json to_json(const Shard& shard);
nlohmann::json to_json(const Map& map);
nlohmann::json to_json(const Mapping& mapping);
nlohmann::json to_json(const TableDef& table);
nlohmann::json to_json(const Xref& xref);

// "10..20", "..5", or the point itself.
std::string mapping_key_text(const Mapping& mapping);

}  // namespace shardctl::catalog
