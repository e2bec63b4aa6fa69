// Engine::check_online: what --online needs of the shards, checked before anything changes.
#include <set>

#include "migrate/operation.hpp"
#include "shardside/replication.hpp"

namespace shardctl::migrate {

void Engine::check_online(const Plan& plan) {
  std::vector<shardside::MovingTable> tables;
  for (const auto& t : plan.tables) tables.push_back({t.quoted, {t.key_column}});
  // One stream at a time per source: batches cut over one after another.
  std::set<std::int64_t> seen;
  for (const auto& seg : plan.segments) {
    if (!seen.insert(seg.source.id).second) continue;
    shardio::RawConn source(seg.source.dsn, "shard " + seg.source.name);
    shardside::check_source(source, tables, 1).require();
  }
  shardio::RawConn target(plan.target.dsn, "shard " + plan.target.name);
  shardside::check_target(target, 1).require();
}

}  // namespace shardctl::migrate
