#include "prepare/prepare.hpp"

#include <optional>

#include "shardio/raw_conn.hpp"
#include "shardio/server_pool.hpp"
#include "shardside/guard.hpp"

namespace shardctl::prepare {

namespace {

// Prepares the shard on `shard`, in one transaction (rolled back in a preview).
Change prepare_on(shardio::RawConn& shard, bool preview) {
  shard.exec("BEGIN");
  try {
    shardside::lock_guard_changes(shard);
    Change change = !shardside::has_guard_table(shard)    ? Change::installed
                    : shardside::guard_is_current(shard) ? Change::current
                                                          : Change::upgraded;
    if (!preview && change != Change::current) shardside::ensure_guard(shard);
    shard.exec(preview ? "ROLLBACK" : "COMMIT");
    return change;
  } catch (...) {
    if (PQtransactionStatus(shard.get()) != PQTRANS_IDLE && PQstatus(shard.get()) == CONNECTION_OK) {
      try {
        shard.exec("ROLLBACK");
      } catch (...) {  // the error in flight says more than a failed rollback
      }
    }
    throw;
  }
}

}  // namespace

Change prepare_shard(const std::string& dsn, const std::string& role, bool preview, int connect_timeout) {
  shardio::RawConn shard(fanout::dsn_with_timeout(dsn, connect_timeout), role);
  return prepare_on(shard, preview);
}

std::vector<Result> prepare_shards(const std::vector<fanout::Target>& targets, int parallel, bool preview,
                                   int connect_timeout) {
  std::vector<Result> results(targets.size());
  std::vector<Change> changes(targets.size(), Change::current);
  // Every connection to the shards comes from one pool: at most `parallel` per server.
  shardio::ServerPool pool(parallel);
  auto outcomes = fanout::run(targets, fanout::Policy{parallel, false}, [&](const fanout::Target& t) {
    auto lease = pool.acquire(fanout::dsn_with_timeout(t.dsn, connect_timeout), "shard " + t.shard);
    // fanout::run passes each target by reference into `targets`: its index is its place.
    changes[static_cast<std::size_t>(&t - targets.data())] = prepare_on(*lease, preview);
  });
  for (std::size_t i = 0; i < targets.size(); ++i) results[i] = Result{outcomes[i], changes[i]};
  return results;
}

}  // namespace shardctl::prepare
