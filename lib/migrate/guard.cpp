#include "migrate/guard.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "shardside/guard.hpp"
#include "shardside/stream_keys.hpp"

namespace shardctl::migrate {
namespace {

// Sessions holding a lock on one of the tables, for the message of a lock timeout, and whether
// one of them is an autovacuum worker.
struct LockHolders {
  std::string text;
  bool autovacuum = false;
};

LockHolders lock_holders(shardio::RawConn& shard, const std::vector<GuardedTable>& tables) {
  // Without tables: the guard's own (ensure_guard_objects alters shardctl.guard_ranges).
  std::string regs = tables.empty() ? "to_regclass(" + shard.literal(shardside::guard_ranges_table) + ")" : "";
  for (const auto& t : tables) regs += (regs.empty() ? "" : ", ") + shard.literal(t.quoted_table) + "::regclass";
  auto rows = shard.query(
      "SELECT DISTINCT a.pid::text, coalesce(a.usename, '?'), coalesce(nullif(a.application_name, ''), '-'), "
      "coalesce(a.state, '?'), coalesce(round(extract(epoch FROM now() - a.xact_start))::text, '?'), "
      "a.backend_type = 'autovacuum worker', coalesce(a.query, '') "
      "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
      "WHERE l.granted AND l.relation IN (" + regs + ") AND a.pid <> pg_backend_pid() "
      // Relation OIDs repeat across the databases of a cluster: this database's locks only.
      "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) ORDER BY 1 LIMIT 5");
  LockHolders out;
  for (const auto& r : rows) {
    bool autovacuum = r[5] == "t";
    out.autovacuum = out.autovacuum || autovacuum;
    out.text += (out.text.empty() ? "" : "; ") + std::string("pid ") + r[0] +
                (autovacuum ? " (" + r[6] + ", running " + r[4] + " s)"
                            : " (user " + r[1] + ", application " + r[2] + ", " + r[3] + ", transaction open " + r[4] + " s)");
  }
  if (out.text.empty()) out.text = "a session that has since let go";
  return out;
}

// Runs `body` in a transaction with a short lock_timeout, retrying with backoff while a
// table lock is held by someone else: DDL queued behind a long transaction would otherwise
// queue every later reader and writer of the table behind itself.
// An autovacuum worker (busy right after a big purge) gives way to a lock request that has
// waited deadlock_timeout: PostgreSQL cancels it, as it does for any DDL. A 1 s lock_timeout
// gives up before that (deadlock_timeout is 1 s by default), so once autovacuum is seen
// holding a lock the next try waits deadlock_timeout and a second longer.
template <class Body>
void with_lock_retries(shardio::RawConn& shard, const std::vector<GuardedTable>& tables, Body body) {
  constexpr int attempts = 5;
  std::string timeout = "1s";
  for (int attempt = 1;; ++attempt) {
    try {
      shard.exec("BEGIN");
      shard.exec("SET LOCAL lock_timeout = " + shard.literal(timeout));
      shardside::lock_guard_changes(shard);
      body();
      shard.exec("COMMIT");
      return;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::locked) throw;
      shard.exec("ROLLBACK");
      auto holders = lock_holders(shard, tables);
      if (attempt == attempts)
        throw locked_error("cannot change the write guard on " + shard.role() + ": a table lock was not granted in " +
                               std::to_string(attempts) + " tries; held by " + holders.text,
                           holders.autovacuum ? "an autovacuum that prevents wraparound does not give way; wait for it "
                                                "to finish, then `shardctl op resume ID`"
                                              : "end that session's transaction, then `shardctl op resume ID`");
      if (holders.autovacuum)
        timeout = shard.query("SELECT round(extract(epoch FROM current_setting('deadlock_timeout')::interval) * 1000 + 1000)::text || 'ms'")[0][0];
      std::this_thread::sleep_for(std::chrono::milliseconds(250 << attempt));
    }
  }
}

}  // namespace

void guard_batch(shardio::RawConn& shard, const shardio::RouteSpace& space, const std::vector<GuardedTable>& tables, const GuardOwner& owner,
                 int batch_no, const routing::KeyRange& range, std::optional<shardside::GuardState> state) {
  with_lock_retries(shard, tables, [&] {
    shardside::ensure_guard(shard);
    shardside::install_guard_triggers(shard, tables, owner.map_id, shardside::guard_key_kind(space));
    if (state)
      shardside::add_batch_range(shard, *state, owner.op_id, owner.map_id, owner.map_name, batch_no,
                                 routing::format_bound(range.low), routing::format_bound(range.high), owner.new_shard);
  });
}

// The triggers are installed, and dropped, one table a transaction (shardside/stream_keys.hpp
// says why); the watch, in a transaction of its own, finds them all in place or starts over.
void watch_stream_keys(shardio::RawConn& target, const std::string& stream, const std::vector<GuardedTable>& tables) {
  constexpr int rounds = 3;
  for (int round = 1;; ++round) {
    for (const auto& t : tables) with_lock_retries(target, {t}, [&] { shardside::install_stream_key_trigger(target, t); });
    bool watched = false;
    with_lock_retries(target, {}, [&] { watched = shardside::watch_stream(target, stream, tables); });
    if (watched) return;
    if (round == rounds)
      throw locked_error("the triggers that record " + stream + "'s keys on " + target.role() + " were dropped as often as installed (" +
                             std::to_string(rounds) + " times)",
                         "another operation's online move to " + target.role() + " ended meanwhile; `shardctl op resume ID`");
  }
}

void unwatch_stream_keys(shardio::RawConn& target, const std::string& stream, const std::vector<GuardedTable>& tables) {
  with_lock_retries(target, {}, [&] { shardside::unwatch_stream(target, stream); });
  for (const auto& t : tables) with_lock_retries(target, {t}, [&] { shardside::drop_unwatched_trigger(target, t); });
}

void ensure_guard_objects(shardio::RawConn& shard) {
  if (shardside::guard_is_current(shard)) return;
  with_lock_retries(shard, {}, [&] { shardside::ensure_guard(shard); });
}

namespace {

// Up to five client sessions of the shard's database whose transaction began before `since`
// and that pass `also` (SQL over pg_stat_activity's row), oldest first, as
// "pid N (user U, application A, STATE); ...": what an error names as holding a step up.
std::string sessions_in_transactions_before(shardio::RawConn& shard, const std::string& since, const char* also) {
  std::string who;
  for (const auto& r : shard.query(
           std::string("SELECT pid::text, coalesce(usename, '?'), coalesce(nullif(application_name, ''), '-'), "
                       "coalesce(state, '?') FROM pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND xact_start < $1::timestamptz ") +
               also + " ORDER BY xact_start LIMIT 5",
           {since}))
    who += (who.empty() ? "" : "; ") + std::string("pid ") + r[0] + " (user " + r[1] + ", application " + r[2] + ", " + r[3] + ")";
  return who;
}

}  // namespace

std::string transactions_older_than(shardio::RawConn& shard, const std::string& since) {
  return sessions_in_transactions_before(shard, since, "");
}

std::string cut_over_waiters(shardio::RawConn& shard, const std::string& since) {
  // A session waiting on the cut-over's own lock is left out: it cannot finish before the
  // cut-over does, and once the range is offline its statement is refused.
  return sessions_in_transactions_before(shard, since, "AND NOT pg_backend_pid() = ANY (pg_blocking_pids(pid))");
}

void wait_for_older_transactions(shardio::RawConn& shard, int seconds) {
  std::string since = shard.query("SELECT clock_timestamp()::text")[0][0];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (int sleep_ms = 10;; sleep_ms = std::min(sleep_ms * 2, 500)) {
    auto who = transactions_older_than(shard, since);
    if (who.empty()) return;
    if (std::chrono::steady_clock::now() > deadline)
      throw locked_error("transactions that began before the write guard on " + shard.role() + " are still open after " +
                             std::to_string(seconds) + " s: " + who,
                         "they could write rows the copy would miss; end them, then `shardctl op resume ID` "
                         "(or `shardctl op cancel ID`)");
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  }
}

namespace {

// A fence of the map that overlaps a range, locked, with its bounds parsed.
struct OverlappingFence {
  shardside::GuardRange row;
  routing::KeyRange range;
};

// Every fence of the map overlapping `range`, locked FOR UPDATE, with the shard's guard
// changes serialized (in the caller's transaction); none when the shard has no guard table.
std::vector<OverlappingFence> fences_overlapping(shardio::RawConn& shard, std::int64_t map_id, routing::KeyType bound_type,
                                                 const routing::KeyRange& range) {
  std::vector<OverlappingFence> out;
  if (!shardside::has_guard_table(shard)) return out;
  shardside::lock_guard_changes(shard);
  for (const auto& r : shardside::lock_fences_of_map(shard, map_id)) {
    routing::KeyRange fence;
    if (r.lo) fence.low = routing::parse_key(bound_type, *r.lo);
    if (r.hi) fence.high = routing::parse_key(bound_type, *r.hi);
    if (routing::ranges_overlap(fence, range)) out.push_back({r, fence});
  }
  return out;
}

}  // namespace

void lift_fences_in(shardio::RawConn& shard, std::int64_t map_id, routing::KeyType bound_type, const routing::KeyRange& range) {
  for (const auto& [r, fence] : fences_overlapping(shard, map_id, bound_type, range)) {
    shardside::delete_guard_range(shard, r.range_id);
    // What is left of the fence on either side of the range keeps refusing writes.
    auto keep = [&, &r = r](const std::optional<routing::Key>& lo, const std::optional<routing::Key>& hi) {
      shardside::GuardRange part = r;
      part.lo = routing::format_bound(lo);
      part.hi = routing::format_bound(hi);
      shardside::add_fence(shard, part);
    };
    if (range.low && (!fence.low || routing::compare_keys(*fence.low, *range.low) < 0)) keep(fence.low, range.low);
    if (range.high && (!fence.high || routing::compare_keys(*range.high, *fence.high) < 0)) keep(range.high, fence.high);
  }
}

void bypass_fences_in(shardio::RawConn& shard, std::int64_t map_id, routing::KeyType bound_type, const routing::KeyRange& range) {
  for (const auto& f : fences_overlapping(shard, map_id, bound_type, range)) shardside::bypass_range(shard, f.row.range_id);
}

int release_guard(shardio::RawConn& shard, const std::string& op_id, std::int64_t map_id, const std::vector<GuardedTable>& tables,
                  bool fences) {
  if (!shardside::has_guard_table(shard)) return 0;
  int left = 0;
  with_lock_retries(shard, tables, [&] {
    shardside::delete_op_ranges(shard, op_id, fences);
    left = shardside::op_range_count(shard, op_id);
    // Children first: DROP TRIGGER locks its table ACCESS EXCLUSIVE, and an application's
    // insert into a child holds the child while its foreign key check waits for the parent.
    // Parents first, this transaction would hold the parent while waiting for the child: a
    // deadlock the server breaks by failing the application's write (t_online_writers moves
    // keys back to a shard whose last fence this lifts).
    // A route floor of the map is still checked: the light trigger replaces the others
    // (guard.hpp), in the same order and in this transaction, so that a kill leaves the
    // map's tables with the heavy triggers or the light one, never neither.
    if (!shardside::map_has_ranges(shard, map_id)) {
      bool floor = shardside::route_floor(shard, map_id).has_value();
      // The light trigger's function may be newer than the shard's guard.
      if (floor) shardside::ensure_guard(shard);
      for (auto t = tables.rbegin(); t != tables.rend(); ++t) {
        if (shard.query("SELECT to_regclass($1) IS NOT NULL", {t->quoted_table})[0][0] != "t") continue;
        if (floor)
          shardside::install_route_triggers(shard, {*t}, map_id);
        else
          shardside::drop_guard_triggers(shard, t->quoted_table);
      }
    }
  });
  return left;
}

}  // namespace shardctl::migrate
