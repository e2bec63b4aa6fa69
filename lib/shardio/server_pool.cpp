#include "shardio/server_pool.hpp"

#include <memory>

#include "pg/dsn.hpp"

namespace shardctl::shardio {

namespace {

// Only a connection that is up and outside any transaction can serve another lease as it is.
bool reusable(const RawConn& c) {
  return PQstatus(c.get()) == CONNECTION_OK && PQtransactionStatus(c.get()) == PQTRANS_IDLE;
}

// A connection the pool ends is gone from the server before its slot serves another one.
void close_waiting(RawConn& c) { c.finish_and_wait(ServerPool::close_wait_limit); }

}  // namespace

ServerPool::ServerPool(int per_server) : pool_(per_server, reusable, close_waiting) {}

ServerPool::Lease ServerPool::acquire(const std::string& dsn, const std::string& role, const std::string& session) {
  // The item names the DSN and the session, which a NUL separates (neither holds one).
  std::string item = dsn;
  item += '\0';
  item += session;
  return pool_.acquire(pg::server_key(dsn), item, [&] {
    auto conn = std::make_unique<RawConn>(dsn, role);
    if (!session.empty()) conn->script(session);
    return conn;
  });
}

KeyedPool<RawConn>::Counts ServerPool::counts(const std::string& dsn) const { return pool_.counts(pg::server_key(dsn)); }

}  // namespace shardctl::shardio
