// A snapshot of what the catalog declares, read once per run and shared read-only by the
// sweep threads: shards, maps with their routers, sharded tables, xrefs, live operations.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "migrate/key_filter.hpp"

namespace shardctl::check {

struct Fleet {
  std::vector<catalog::Shard> shards;
  std::map<std::string, catalog::LoadedMap> maps;  // by name; routers are immutable, so shared
  std::vector<catalog::TableDef> sharded_tables;
  std::vector<catalog::Xref> xrefs;
  std::set<std::string> live_ops;                  // op ids not done or cancelled
  std::set<std::string> shards_with_live_ops;      // shards a live operation works on
  // Key ranges (hash ranges for hash maps) live operations work on, by map: their rows may
  // legitimately sit on two shards until the operation's purge, so they are no strays.
  std::map<std::string, std::vector<routing::KeyRange>> in_flight;

  const catalog::LoadedMap& map(const std::string& name) const;
  const catalog::Shard* shard(const std::string& name) const;
  // Whether any mapping of `map` routes to `shard`.
  bool map_uses_shard(const std::string& map, const std::string& shard) const;
};

Fleet load_fleet(pg::Connection& catalog);

migrate::RouteSpace space_of(const catalog::LoadedMap& map);

}  // namespace shardctl::check
