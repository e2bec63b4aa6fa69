// The write guard and the fence: shardctl's state on a source shard that makes the database
// itself refuse writes to keys an operation is moving (offline) or has moved away (fenced).
// This file decides when; the objects, their SQL and names are lib/shardside's (guard.hpp,
// sql/guard.sql).
//
// Shard-side state, in schema shardctl of every shard that was ever the source of a move:
// shardctl.guard_ranges (shardside/guard.hpp), one row per batch range of an operation (and
// shardctl.guard_bypass, the further purge transactions of a range, purge.cpp):
//   'offline': being moved, writes refused (55000)
//   'fenced':  moved away to new_shard; writes refused (55000, naming new_shard) until lifted
//              or expired
//   'cutover': an online move's cut-over (online.hpp); writes wait for its end, then are
//              refused (the keys moved: the range is offline) or go on (it gave up)
// Triggers on each sharded table of the map, all ENABLE ALWAYS (they fire under
// session_replication_role = replica too) and calling SECURITY DEFINER functions, so an
// application role needs no privilege on schema shardctl and cannot write it. A plain table:
//   shardctl_guard_insert    AFTER INSERT FOR EACH STATEMENT, transition table shardctl_new
//   shardctl_guard_update    AFTER UPDATE FOR EACH STATEMENT, shardctl_old and shardctl_new
//   shardctl_guard_delete    AFTER DELETE FOR EACH STATEMENT, shardctl_old
//     the guard itself: one set-based check of the statement's keys (well under a µs a row)
//   shardctl_guard           BEFORE INSERT OR UPDATE FOR EACH ROW
//                            WHEN (current_setting('shardctl.row_guard', true) IS DISTINCT FROM 'off')
//     an early refusal for applications, so they see 55000 before an FK violation (RI checks
//     are row triggers, which fire before any AFTER STATEMENT trigger). Not on DELETE: a
//     BEFORE ROW DELETE trigger, even one its WHEN keeps from firing, makes PostgreSQL lock
//     each row before deleting it, which cost the purge a third of its DELETE; an application's
//     DELETE of a guarded key that an FK also refuses sees the FK's error. shardctl's own
//     sessions set shardctl.row_guard = off (bulk_guard_session): anyone may, and it only
//     skips the early refusal, never the guard.
// An earlier version's row trigger without WHEN is replaced when a guard is next installed.
// A partitioned table, whose partitions a statement can name directly, keeps the row
// trigger alone and without WHEN (cloned to each partition, also those attached later), with a
// fourth argument, 'each_row': it checks a stated route (below) for every row, where on a plain
// table the statement triggers check it once a statement and the row trigger only before a
// refusal of its own.
// Both: shardctl_guard_truncate  BEFORE TRUNCATE FOR EACH STATEMENT
// Route floors (shardctl.route_floors, shardside/guard.hpp): the purge that turns a batch's
// range into a fence raises the source's floor for the map to the batch's flip version
// (op_batches.flip_version, written by the flip), in the same transaction (purge.cpp), so a
// kill at any step leaves the fence and the floor together or neither; a resumed purge redoes
// both. A transaction that states an older version of the map in shardctl.route is refused
// there (shardctl_stale_route) before any range is looked at, whichever key it writes. Floors
// never expire nor go down: fence_grace and `op unfence` leave them.
// A map's triggers above exist while the map has any range on that shard. When the last range
// goes (release_guard: the end of a move, `op unfence`, which also lifts fences past their
// fence_grace, still recorded until then) they are dropped if the map has no floor there, and
// otherwise replaced, in the same transaction, by the light trigger alone, which checks the
// floor and nothing else:
//   shardctl_guard_route     BEFORE INSERT OR UPDATE OR DELETE, ENABLE ALWAYS,
//                            WHEN (current_setting('shardctl.route', true) <> '')
//     FOR EACH STATEMENT on a plain table, FOR EACH ROW on a partitioned one (cloned to each
//     partition, for statements that name one). A transaction that states no version does not
//     call it (the WHEN; 120 us a one-row write less than the triggers above: bench/README.md);
//     one that does is refused as the triggers above refuse it (a stale version, 55000
//     shardctl_stale_route; a malformed value, 22023). No TRUNCATE trigger: without a range
//     there is nothing a TRUNCATE could break.
// The next guard of the map on that shard (guard_batch) replaces it with the triggers above.
// The table of earlier versions, shardctl.offline_ranges, is dropped when found.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "shardio/key_filter.hpp"
#include "shardio/raw_conn.hpp"
#include "shardside/guard.hpp"
#include "shardside/names.hpp"

namespace shardctl::migrate {

// Run once on every shard session of shardctl that writes moving rows (loads, purges): its
// bulk statements skip the guard's per-row early refusal; the statement triggers still check.
inline constexpr const char* bulk_guard_session = shardside::bulk_guard_session;

using GuardedTable = shardside::GuardedTable;

struct GuardOwner {
  std::string op_id;
  std::int64_t map_id = 0;
  std::string new_shard;  // the operation's target
  std::string map_name;   // kept on the ranges, for the refusals' DETAIL
};

// In one transaction of the source, under lock_timeout with retries: the guard functions and
// table (idempotent), the map's triggers where missing, and the batch's range as offline (or
// `state`). Committed before it returns, so the guard is in force before the batch's first row
// is read. Gives up with a locked Error (75) naming the session that holds a table lock.
// Without a range (`state` none): only the functions, table and triggers, which an online move
// installs before its cut-over so that the cut-over takes no table lock.
void guard_batch(shardio::RawConn& shard, const shardio::RouteSpace& space, const std::vector<GuardedTable>& tables, const GuardOwner& owner,
                 int batch_no, const routing::KeyRange& range,
                 std::optional<shardside::GuardState> state = shardside::GuardState::offline);

// Waits until every transaction of the shard's database that began before now has ended: a
// REPEATABLE READ writer whose snapshot predates the guard would not see it, and a writer
// whose row is uncommitted would commit it after the copy read the batch. Gives up after
// `seconds` with a locked Error naming the sessions.
void wait_for_older_transactions(shardio::RawConn& shard, int seconds);
// The client sessions of the shard's database whose transaction began before `since` (a
// timestamptz the shard wrote), "pid N (user, application, state)" each; empty when none.
std::string transactions_older_than(shardio::RawConn& shard, const std::string& since);

// At an online cut-over (this session holds the cut-over's lock, shardside::lock_cutover): the
// client sessions whose transaction began before `since` and that the cut-over waits for,
// "pid N (user, application, state)" each; empty when none. A session blocked by the
// cut-over's lock is left out: it waits in the guard for the cut-over to end, and its statement
// is then refused (the range offline), so it can write nothing the cut-over would miss, and it
// could not end before the cut-over does. (What it wrote in an earlier statement of its
// transaction is undone with it; an application that catches the refusal in a savepoint and
// commits the rest commits those rows on the source after the flip, where the purge's digest
// finds them and refuses to delete: man/shardctl-split.1, "Online".)
std::string cut_over_waiters(shardio::RawConn& shard, const std::string& since);

// The batch's guard state on the source (none: it has no range); inside the caller's open
// transaction on the source, the purge's bypass of the batch's range (this transaction only),
// and the batch's offline range turned into a fence, expiring after `grace` or never.
using shardside::batch_guard_state;
using shardside::bypass_batch_guard;
using shardside::fence_batch;

// Inside the caller's open transaction on a target: removes the part of any fence of the map
// that covers `range` (keys coming back to a shard that once gave them away).
void lift_fences_in(shardio::RawConn& shard, std::int64_t map_id, routing::KeyType bound_type, const routing::KeyRange& range);

// Inside the caller's open transaction on a target: lets that transaction through every fence
// of the map that overlaps `range` (their purge_xid), which keep refusing everyone else: an
// online move's copy into keys the target gave away earlier, which stay the source's until
// the flip (lift_fences_in then).
void bypass_fences_in(shardio::RawConn& shard, std::int64_t map_id, routing::KeyType bound_type, const routing::KeyRange& range);

// Outside any transaction, under lock_timeout with retries: the guard's functions and tables
// (shardside::ensure_guard), no trigger, no range. A move's target gets them, so that
// shardctl.assert_route exists on every shard a move touched.
void ensure_guard_objects(shardio::RawConn& shard);

// On an online move's target, under lock_timeout with retries like the guard's changes: a
// record of the keys the batch's stream changes from now on (shardside/stream_keys.hpp), its
// trigger installed where missing; unwatch_stream_keys ends the record and drops the trigger
// from tables no other stream watches. The cut-over verify starts one before it compares the
// batch (cut_over_verify.hpp); the stream's drop ends it.
void watch_stream_keys(shardio::RawConn& target, const std::string& stream, const std::vector<GuardedTable>& tables);
void unwatch_stream_keys(shardio::RawConn& target, const std::string& stream, const std::vector<GuardedTable>& tables);

// Removes the op's offline ranges (and its fences too when `fences` is set) in one
// transaction, and, when the map has no range left on the shard, drops the map's triggers
// (no route floor there) or puts the light trigger in their place (a floor), children first
// (`tables` are parents first). Returns the number of fence ranges of the op left on the shard.
int release_guard(shardio::RawConn& shard, const std::string& op_id, std::int64_t map_id, const std::vector<GuardedTable>& tables,
                  bool fences);

}  // namespace shardctl::migrate
