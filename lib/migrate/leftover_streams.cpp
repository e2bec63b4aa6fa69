#include "migrate/leftover_streams.hpp"

#include <algorithm>
#include <cctype>
#include <memory>

#include "catalog/catalog.hpp"
#include "shardio/raw_conn.hpp"
#include "shardside/replication_cleanup.hpp"

namespace shardctl::migrate {

namespace {

// An operation id's 32 hex digits, lowercase: the id as an operator may type it (any case, with
// or without hyphens or braces) and as a replication name spells it compare equal.
std::string id_digits(std::string_view id) {
  std::string out;
  for (char c : id)
    if (std::isxdigit(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::vector<LeftoverStream> drop_leftover_streams(pg::Connection& catalog, const std::string& op_id, bool dry_run) {
  const std::string owner = id_digits(op_id);
  catalog::Store store(catalog);
  std::vector<std::unique_ptr<shardio::RawConn>> conns;
  std::vector<LeftoverStream> found;
  std::vector<shardio::RawConn*> conn_of;  // found[i]'s shard connection
  for (const auto& s : store.list_shards()) {
    if (s.status == catalog::ShardStatus::offline) continue;
    auto conn = std::make_unique<shardio::RawConn>(s.dsn, "shard " + s.name);
    for (auto& o : shardside::list_replication_objects(*conn))
      if (id_digits(o.owner.op_id) == owner) {
        found.push_back({s.name, std::move(o)});
        conn_of.push_back(conn.get());
      }
    conns.push_back(std::move(conn));
  }
  std::vector<std::size_t> order(found.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return shardside::drop_order(found[a].object.kind) < shardside::drop_order(found[b].object.kind);
  });
  std::vector<LeftoverStream> in_order;
  for (auto i : order) {
    if (!dry_run) shardside::drop_replication_object(*conn_of[i], found[i].object);
    in_order.push_back(std::move(found[i]));
  }
  return in_order;
}

}  // namespace shardctl::migrate
