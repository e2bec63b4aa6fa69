// The connections of one fan-out to shard databases, bounded per server: at most `per_server`
// open at once to the databases of one server (pg::server_key: its host and port), however many
// shard databases it holds and however many threads ask (core/keyed_pool.hpp says how a
// connection is chosen: an idle one to the same database, a new one, or a new one in place of
// an idle one to another database). Every command that visits many shards takes its shard
// connections from one of these, so that it holds at most --parallel connections per server
// (shardctl(1), CONNECTIONS).
#pragma once

#include <string>

#include "core/keyed_pool.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::shardio {

class ServerPool {
 public:
  // How long a connection the pool closes is waited for (RawConn::finish_and_wait): its backend
  // exits in well under a millisecond on an idle server, a busy one may take longer.
  static constexpr std::chrono::milliseconds close_wait_limit{2000};

  using Lease = KeyedPool<RawConn>::Lease;

  explicit ServerPool(int per_server);

  int per_server() const noexcept { return pool_.per_group(); }

  // A connection to the database `dsn` names, as `role` ("shard s1"), blocking while its server
  // has `per_server` connections in use. `session` (statements shardctl wrote, e.g.
  // session_settings) runs once on a new connection; an idle connection is handed on only to an
  // acquire of the same DSN and session. A lease's connection goes back idle when the lease
  // ends, unless the connection is broken or inside a transaction (then it is closed), or the
  // lease was discarded. Throws as RawConn's constructor does (unavailable; TooManyConnections).
  Lease acquire(const std::string& dsn, const std::string& role, const std::string& session = {});

  KeyedPool<RawConn>::Counts counts(const std::string& dsn) const;

 private:
  KeyedPool<RawConn> pool_;
};

}  // namespace shardctl::shardio
