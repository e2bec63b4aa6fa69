// The keys an online move's replication stream changes on its target, recorded by the target
// itself (sql/stream_keys.sql): the cut-over compares again only their rows, inside the window
// writers wait through, having compared the rest of the batch before it (lib/migrate/cut_over_verify.hpp).
//
// A trigger, shardctl_stream_keys, AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW on each moving
// table of the target, enabled REPLICA: it fires for a subscription's apply worker (which writes
// with session_replication_role = replica) and for no application session. It records the key
// of every row it sees change (a key update: both keys) under every stream that watches the
// table (shardctl.stream_watch). A partitioned table's trigger is cloned to its partitions, each
// enabled REPLICA too, and records under the root's name.
//
// watch_stream() starts a stream's record afresh; what the record then holds is every key the
// stream changed since that commit (and possibly more: another stream's keys of the same table,
// or a load of shardctl's own in replica mode while the record is on; a key recorded too many is
// only compared again). unwatch_stream() ends it, and drops the triggers no stream watches.
// Every function runs in the caller's transaction, which serializes them with the guard's
// changes (shardside::lock_guard_changes) and bounds its lock waits (lib/migrate/guard.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardio/raw_conn.hpp"
#include "shardside/guard.hpp"

namespace shardctl::shardside {

// The tables and the function where missing, and the table's trigger unless it is as this
// version makes it. Its own transaction for each table: a DDL lock on one table is never held
// while waiting for another's (a writer holding the second and waiting for the first, its
// parent, through a foreign key, would deadlock with it).
void install_stream_key_trigger(shardio::RawConn& target, const GuardedTable& table);

// A watch of `stream` on every table, and its record emptied; false (nothing done) when a
// table's trigger is missing or not as this version makes it (dropped since it was installed):
// install it, then watch again.
bool watch_stream(shardio::RawConn& target, const std::string& stream, const std::vector<GuardedTable>& tables);

// The keys recorded for the stream and table (its quoted name), as text. In the caller's
// snapshot: under REPEATABLE READ, the keys changed by what the snapshot sees applied.
std::vector<std::string> stream_keys(shardio::RawConn& target, const std::string& stream, const std::string& quoted_table);

// How many keys are recorded for the stream, all tables (0 when the tables do not exist).
std::int64_t stream_key_count(shardio::RawConn& target, const std::string& stream);

// The stream's watch and record deleted. Idempotent: nothing to do on a shard without the tables.
void unwatch_stream(shardio::RawConn& target, const std::string& stream);

// The streams with a watch on any table, by name (none on a shard without the tables).
std::vector<std::string> watched_streams(shardio::RawConn& target);

// A stream's watch and record deleted as unwatch_stream() does: the cleanup of a stream whose
// operation is over (lib/shardside/replication_cleanup.hpp). Returns whether a watch was there.
// The tables' triggers stay: without a watch they record nothing, and dropping them takes a
// lock the applications' writes would queue behind; the next move of the table reuses them.
bool drop_stream_watch(shardio::RawConn& target, const std::string& stream);

// The table's trigger dropped unless a stream watches the table. Its own transaction per
// table, as install_stream_key_trigger.
void drop_unwatched_trigger(shardio::RawConn& target, const GuardedTable& table);

}  // namespace shardctl::shardside
