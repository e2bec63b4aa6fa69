// Routes keys to shards from an in-memory copy of one map's mappings. Built once, then
// queried many times (lookup streams millions of keys through one Router).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/key.hpp"

namespace shardctl::routing {

// One mapping of a map as the router sees it. For list maps `range.low` holds the point and
// `is_point` is true; for hash maps the range bounds are int64 hash values.
struct MappingEntry {
  KeyRange range;
  bool is_point = false;
  std::int32_t shard_index = -1;  // index into the caller's shard table
  bool online = true;
};

struct Route {
  std::int32_t shard_index;
  bool online;
  std::int32_t entry_index = -1;  // which of make_router's entries routed the key
};

class Router {
 public:
  virtual ~Router() = default;
  // Routes a parsed key. nullopt when no mapping covers it.
  virtual std::optional<Route> route(const Key& key) const = 0;
  // Parses and routes in one step, without allocating for int/uuid keys. Throws a usage
  // Error when the text does not parse as the map's key type.
  virtual std::optional<Route> route_text(std::string_view key_text) const = 0;
};

// Builds the router for a map. Throws a data Error if entries overlap (the catalog forbids it).
std::unique_ptr<Router> make_router(MapKind kind, KeyType key_type, std::vector<MappingEntry> entries);

}  // namespace shardctl::routing
