#include "schema/lock.hpp"

#include <algorithm>
#include <thread>
#include <vector>

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
      "SELECT a.pid::text, coalesce(a.application_name, ''), coalesce(host(a.client_addr), 'local'), "
      "coalesce(a.usename::text, ''), coalesce(to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ'), ''), "
      "coalesce(a.state, '') "
      "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::int::oid AND l.objid = $2::int::oid "
      "AND l.objsubid = 2 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
      "LIMIT 1",
      key());
  if (r.empty()) return "another session";
  const auto& h = r[0];
  // Only what the server said: a field it left empty (or hid) is left out, with its label.
  std::vector<std::string> parts;
  auto add = [&](const std::string& label, std::string value) {
    auto b = value.find_first_not_of(' ');
    auto e = value.find_last_not_of(' ');
    if (b == std::string::npos) return;
    parts.push_back(label + value.substr(b, e - b + 1));
  };
  add("application_name ", h[1]);
  add("client ", h[2]);
  add("user ", h[3]);
  add("connected since ", h[4]);
  add("", h[5]);
  std::string out = "pid " + h[0];
  if (!parts.empty()) {
    out += " (";
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    out += ")";
  }
  return out;
}

bool rollout_lock_held(shardio::RawConn& conn) {
  auto r = conn.query(
      "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1::int::oid "
      "AND objid = $2::int::oid AND objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = "
      "current_database()))",
      key());
  return !r.empty() && r[0][0] == "t";
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
      throw locked_error(msg, "another `shardctl schema apply`, `baseline` or `repair` runs on it; try again when it has "
                              "finished (or raise --lock-timeout). The lock belongs to that server session: a rollout "
                              "killed in a statement leaves it running until the statement ends, and the next run "
                              "takes the lock over once that session is gone");
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
}

void release_rollout_lock(shardio::RawConn& conn) {
  conn.query("SELECT pg_advisory_unlock($1::int, $2::int)", key());
}

void reset_and_release_rollout_lock(shardio::RawConn& conn) {
  // The key is two numbers of shardctl's own, written into the text.
  conn.script("RESET ALL; SELECT pg_advisory_unlock(" + key()[0] + ", " + key()[1] + ")");
}

}  // namespace shardctl::schema
