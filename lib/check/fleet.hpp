// What the catalog declares, read by a check: shards, maps with their routers, sharded tables,
// xrefs, and the key ranges of operations that ran during the check. The run reads it once
// for the shard list; every shard sweep re-reads it (a "view") before and after its pass, so
// routing and exclusions follow the catalog while moves run (see shardctl-check(1),
// BEHAVIOUR DURING OPERATIONS).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "shardio/key_filter.hpp"

namespace shardctl::check {

struct Fleet {
  std::vector<catalog::Shard> shards;
  std::map<std::string, catalog::LoadedMap> maps;  // by name; routers are immutable, so shared
  std::vector<catalog::TableDef> sharded_tables;
  std::vector<catalog::Xref> xrefs;
  std::set<std::string> live_ops;                  // op ids not done or cancelled
  // Op ids whose key ranges are excluded: unfinished now, or created, updated or finished
  // since the check began (`since`). Their rows may legitimately sit on two shards, or be
  // routed differently from one moment to the next, so they are neither findings nor fixed.
  std::set<std::string> excluded_ops;
  // Those operations' key ranges (hash ranges for hash maps), by map.
  std::map<std::string, std::vector<routing::KeyRange>> in_flight;
  std::map<std::string, std::pair<std::string, routing::KeyRange>> excluded_ranges;  // op id -> (map, range)

  const catalog::LoadedMap& map(const std::string& name) const;
  const catalog::Shard* shard(const std::string& name) const;
  // Whether any mapping of `map` routes to `shard`.
  bool map_uses_shard(const std::string& map, const std::string& shard) const;
};

// The catalog's clock when a check begins: operations touched from then on are excluded.
std::string catalog_now(pg::Connection& catalog);

// `since`: the catalog time the check began (catalog_now); empty means only unfinished
// operations are excluded.
Fleet load_fleet(pg::Connection& catalog, const std::string& since = {});

// Adds the operations `earlier` excluded to `later`: once in flight during a run, always left
// out (an operation whose finishing transaction began before `since` but committed after an
// earlier read would otherwise drop out of later reads).
void carry_exclusions(const Fleet& earlier, Fleet& later);

shardio::RouteSpace space_of(const catalog::LoadedMap& map);

// The mappings of a map outside `excluded`, as one comparable string (range, shard, status).
std::string mapping_signature(const std::vector<catalog::Mapping>& mappings,
                              const std::vector<routing::KeyRange>& excluded);

// Whether a sweep that used `before` may have seen a different routing than `after` says:
// an operation appeared that `before` did not exclude, or mappings outside `after`'s
// excluded ranges changed (a hand edit, a mapping added or removed).
bool fleet_moved(const Fleet& before, const Fleet& after);

}  // namespace shardctl::check
