// The write guard's objects on a shard (sql/guard.sql, the triggers, the rows of
// shardctl.guard_ranges) and the statements that read and change them. When they are installed,
// changed and released, and what each state refuses, is lib/migrate/guard.hpp's business.
//
//   shardctl.guard_ranges (
//     range_id   bigint identity PRIMARY KEY,
//     op_id      uuid NOT NULL,        -- the operation that owns the range
//     map_id     bigint NOT NULL,      -- the catalog map; triggers look at their own map only
//     batch_no   integer NOT NULL,
//     lo, hi     text,                 -- bounds in the map's route space, NULL = unbounded
//     state      text NOT NULL,        -- 'offline' (being moved), 'fenced' (moved away) or
//                                      -- 'cutover' (an online move's cut-over: writes wait)
//     new_shard  text NOT NULL,        -- the target shard's name
//     purge_xid  xid8,                 -- the owning operation's purge transaction: its only bypass
//     expires_at timestamptz,          -- a fence stops refusing after this; NULL = until lifted
//     created_at timestamptz NOT NULL DEFAULT now())
//     map_name   text,                 -- the map's name, for the refusals' DETAIL (NULL: added
//                                      -- by an earlier version)
//   shardctl.guard_bypass (range_id, xid): more purge transactions a range lets through, for a
//     purge split over two sessions (lib/migrate/purge.cpp); deleted with their range
//   shardctl.route_floors (
//     map_id      bigint PRIMARY KEY,
//     map_name    text NOT NULL,       -- what a transaction names in shardctl.route
//     min_version bigint NOT NULL,     -- the oldest map version a router may hold to write here
//     op_id       uuid,                -- the operation whose purge raised it last
//     new_shard   text,                -- where that operation moved the keys
//     raised_at   timestamptz)
//
// Every refusal of the guard's functions is SQLSTATE 55000 with the constraint shardctl_moving
// (an offline or cut-over range), shardctl_fenced (a fence) or shardctl_stale_route (a version
// stated in shardctl.route older than the map's floor), and a JSON DETAIL: state, map, map_id,
// operation, new_owner, min_version, stated_version, key, table. A malformed shardctl.route is
// 22023, shardctl_bad_route. man/shardctl-split.1 ("What applications see") shows them;
// tests/integration/t_route_floor.sh reads them back field by field.
// shardctl.assert_route(map, version), the one function application roles may call (schema
// shardctl is usable by PUBLIC for it), states a version and refuses a stale one at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shardio/key_filter.hpp"
#include "shardio/raw_conn.hpp"
#include "shardside/guard_state.hpp"

namespace shardctl::shardside {

struct GuardedTable {
  std::string quoted_table;
  std::string key_column;  // raw name
};

// One row of shardctl.guard_ranges.
struct GuardRange {
  std::int64_t range_id = 0;
  std::string op_id;
  std::int64_t map_id = 0;
  int batch_no = 0;
  std::optional<std::string> lo;  // bounds in the map's route space (routing::format_bound); none: unbounded
  std::optional<std::string> hi;
  GuardState state = GuardState::offline;
  std::string new_shard;
  std::optional<std::string> expires_at;  // timestamptz as the server writes it; none: never
  bool expired = false;                   // expires_at has passed, by the shard's clock
  std::optional<std::string> map_name;    // none on a range an earlier version added
};

// One row of shardctl.route_floors.
struct RouteFloor {
  std::int64_t map_id = 0;
  std::string map_name;
  std::int64_t min_version = 0;
  std::optional<std::string> op_id;
  std::optional<std::string> new_shard;
};

// The guard functions' version: a hash of sql/guard.sql, kept as the comment on
// shardctl.guard_hit. A shard whose functions came from another shardctl (older, or newer and
// then downgraded) gets this one's at its next ensure_guard, so a fixed guard reaches shards
// that already had one; the functions are replaced in place (CREATE OR REPLACE), triggers kept.
const std::string& guard_version();

// The `how` argument of the guard's triggers for a map's route space: which cast or hash turns
// a key into the value its ranges' bounds compare with.
std::string guard_key_kind(const shardio::RouteSpace& space);

// Takes the shard-side advisory lock (transaction scope) that serializes guard changes on a shard.
void lock_guard_changes(shardio::RawConn& shard);

bool has_guard_table(shardio::RawConn& shard);

// Whether the shard's guard table and functions are this version's (guard_version()).
bool guard_is_current(shardio::RawConn& shard);

// In the caller's transaction: the guard's schema, tables (guard_ranges, guard_bypass,
// route_floors) and functions, assert_route among them, unless the shard's are already this
// version's. Every shard a move touches gets them (its sources and its target), so
// assert_route exists wherever a router may send a transaction.
void ensure_guard(shardio::RawConn& shard);

// In the caller's transaction: the guard's triggers on each table, for `map_id` with `how` =
// guard_key_kind. A partitioned table keeps the row trigger alone (cloned to each partition);
// a plain table gets one statement trigger per event and the row trigger with its WHEN. Both
// get the TRUNCATE trigger. Tables whose triggers are already this version's, enabled ALWAYS,
// are left alone.
void install_guard_triggers(shardio::RawConn& shard, const std::vector<GuardedTable>& tables, std::int64_t map_id,
                            const std::string& how);

// In the caller's transaction: the light trigger alone on each table (the others dropped),
// for a map that has a route floor but no range on the shard (lib/migrate/guard.hpp): BEFORE
// INSERT OR UPDATE OR DELETE, FOR EACH STATEMENT on a plain table and FOR EACH ROW on a
// partitioned one, with a WHEN that keeps it from firing when the transaction states no
// version. Tables that already have exactly it, enabled ALWAYS, are left alone.
void install_route_triggers(shardio::RawConn& shard, const std::vector<GuardedTable>& tables, std::int64_t map_id);

// Drops every guard trigger (this version's and earlier ones', the light one too) from the table.
void drop_guard_triggers(shardio::RawConn& shard, const std::string& quoted_table);

// Every range of the shard, by operation and batch; empty when the shard has no guard table.
std::vector<GuardRange> guard_ranges(shardio::RawConn& shard);

// The map's fences, locked FOR UPDATE (in the caller's transaction).
std::vector<GuardRange> lock_fences_of_map(shardio::RawConn& shard, std::int64_t map_id);

// The batch's state; none when it has no range (or there is no table).
std::optional<GuardState> batch_guard_state(shardio::RawConn& shard, const std::string& op_id, int batch_no);

// Adds the batch's range in `state` (offline or cutover) unless the batch has one already.
void add_batch_range(shardio::RawConn& shard, GuardState state, const std::string& op_id, std::int64_t map_id,
                     const std::string& map_name, int batch_no, const std::optional<std::string>& lo,
                     const std::optional<std::string>& hi, const std::string& new_shard);

// The cut-over of an online move (sql/guard.sql): while this session holds the batch's lock, a
// write that meets the batch's range in state cutover waits for it. Tries for at most `wait`
// (writers let through by an earlier cut-over of the batch hold it shared until they end);
// false when it could not. The lock is the session's until unlock_cutover or its end.
bool lock_cutover(shardio::RawConn& shard, const std::string& op_id, int batch_no, int wait_ms);
void unlock_cutover(shardio::RawConn& shard, const std::string& op_id, int batch_no);

// Ends the batch's cut-over: its range becomes offline (the keys are the target's: writes
// refused, the purge excepted) or, when it gave up, is deleted (writes go on). Returns whether
// the batch had a range in cutover.
bool end_cutover(shardio::RawConn& shard, const std::string& op_id, int batch_no, bool moved);

// Adds a fence with the given owner, map name, bounds, target and expiry (range_id and state
// are ignored).
void add_fence(shardio::RawConn& shard, const GuardRange& fence);

void delete_guard_range(shardio::RawConn& shard, std::int64_t range_id);

// Records the caller's transaction as the one the range lets through (guard_ranges.purge_xid).
void bypass_range(shardio::RawConn& shard, std::int64_t range_id);

// Records the caller's transaction as the purge of the batch's offline range: its only bypass.
void bypass_batch_guard(shardio::RawConn& shard, const std::string& op_id, int batch_no);

// Records the caller's transaction as one more purge transaction of the batch's offline range
// (shardctl.guard_bypass), without writing the range's row: another purge transaction turns it
// into a fence. Needs a current guard (guard_is_current).
void add_batch_bypass(shardio::RawConn& shard, const std::string& op_id, int batch_no);

// Turns the batch's offline range into a fence expiring after `grace` (a PostgreSQL interval) or never.
void fence_batch(shardio::RawConn& shard, const std::string& op_id, int batch_no, const std::optional<std::string>& grace);

// Deletes the batch's range unless it is a fence (a cancelled online batch's cut-over).
void delete_batch_range(shardio::RawConn& shard, const std::string& op_id, int batch_no);

// Deletes the op's offline and cutover ranges, and its fences too when `fences` is set.
void delete_op_ranges(shardio::RawConn& shard, const std::string& op_id, bool fences);

// How many ranges (of any state) / fences the op has on a shard that has a guard table.
int op_range_count(shardio::RawConn& shard, const std::string& op_id);
int op_fence_count(shardio::RawConn& shard, const std::string& op_id);

// Whether the map has any range on a shard that has a guard table.
bool map_has_ranges(shardio::RawConn& shard, std::int64_t map_id);

// In the caller's transaction (the one that fences the batches, lib/migrate/purge.cpp): the
// map's floor raised to `version` (min_version = greatest(floor, version)); op_id, new_shard
// and raised_at name the raise that set it. Needs a current guard (guard_is_current).
void raise_route_floor(shardio::RawConn& shard, std::int64_t map_id, const std::string& map_name, std::int64_t version,
                       const std::string& op_id, const std::string& new_shard);

// The map's floor; none when it has none (or the shard has no route_floors table).
std::optional<RouteFloor> route_floor(shardio::RawConn& shard, std::int64_t map_id);

// Every floor of the shard, by map id; empty when it has no route_floors table.
std::vector<RouteFloor> route_floors(shardio::RawConn& shard);

// A session lock (outside any transaction) that serializes the raises of the map's floor on the
// shard: a purge is REPEATABLE READ, and two purges that both update the map's row of
// route_floors, the second on a snapshot older than the first's commit, would fail the second
// (a serialization failure). Taken before the purge's snapshot, released after its last commit.
void lock_route_floor(shardio::RawConn& shard, std::int64_t map_id);
void unlock_route_floor(shardio::RawConn& shard, std::int64_t map_id);

}  // namespace shardctl::shardside
