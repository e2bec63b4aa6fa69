#include "migrate/leftover_streams.hpp"

#include <algorithm>
#include <memory>

#include "catalog/catalog.hpp"
#include "shardio/raw_conn.hpp"
#include "shardside/replication_cleanup.hpp"

namespace shardctl::migrate {

std::vector<LeftoverStream> drop_leftover_streams(pg::Connection& catalog, const std::string& op_id, bool dry_run) {
  // The id as the names spell it (any case, with or without hyphens, is the same operation).
  const std::string owner = shardside::parse_replication_name(shardside::replication_name(op_id, 0))->op_id;
  catalog::Store store(catalog);
  std::vector<std::unique_ptr<shardio::RawConn>> conns;
  std::vector<LeftoverStream> found;
  std::vector<shardio::RawConn*> conn_of;  // found[i]'s shard connection
  for (const auto& s : store.list_shards()) {
    if (s.status == catalog::ShardStatus::offline) continue;
    auto conn = std::make_unique<shardio::RawConn>(s.dsn, "shard " + s.name);
    for (auto& o : shardside::list_replication_objects(*conn))
      if (o.owner.op_id == owner) {
        found.push_back({s.name, std::move(o)});
        conn_of.push_back(conn.get());
      }
    conns.push_back(std::move(conn));
  }
  if (dry_run) return found;
  std::vector<std::size_t> order(found.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return shardside::drop_order(found[a].object.kind) < shardside::drop_order(found[b].object.kind);
  });
  for (auto i : order) shardside::drop_replication_object(*conn_of[i], found[i].object);
  return found;
}

}  // namespace shardctl::migrate
