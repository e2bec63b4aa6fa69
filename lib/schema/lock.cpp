#include "schema/lock.hpp"

#include <algorithm>
#include <thread>

#include "catalog/locks.hpp"
#include "core/error.hpp"

namespace shardctl::schema {
namespace {

std::vector<std::string> key() { return {std::to_string(catalog::lock_class), std::to_string(rollout_lock_object)}; }

bool try_lock(shardio::RawConn& conn) {
  auto r = conn.query("SELECT pg_try_advisory_lock($1::int, $2::int)", key());
  return !r.empty() && r[0][0] == "t";
}

}  // namespace

std::string describe_rollout_lock_holder(shardio::RawConn& conn) {
  auto r = conn.query(
      "SELECT a.pid::text, coalesce(nullif(a.application_name, ''), '-'), coalesce(host(a.client_addr), 'local'), "
      "coalesce(a.usename::text, '-'), coalesce(to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ'), '-'), "
      "coalesce(a.state, '-') "
      "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::int::oid AND l.objid = $2::int::oid "
      "AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
      "LIMIT 1",
      key());
  if (r.empty()) return "another session";
  const auto& h = r[0];
  std::string out = "pid ";
  out += h[0];
  out += " (application_name ";
  out += h[1];
  out += ", client ";
  out += h[2];
  out += ", user ";
  out += h[3];
  out += ", connected since ";
  out += h[4];
  out += ", ";
  out += h[5];
  out += ")";
  return out;
}

void acquire_rollout_lock(shardio::RawConn& conn, std::chrono::milliseconds timeout, const std::string& shard) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(20);
  while (!try_lock(conn)) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      std::string msg = "the schema rollout lock of shard ";
      msg += shard;
      msg += " is held by ";
      msg += describe_rollout_lock_holder(conn);
      throw locked_error(msg, "another `shardctl schema apply` or `baseline` runs on it; try again when it has finished "
                              "(or raise --lock-timeout)");
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
}

void release_rollout_lock(shardio::RawConn& conn) {
  conn.query("SELECT pg_advisory_unlock($1::int, $2::int)", key());
}

}  // namespace shardctl::schema
