// The per-shard rollout lock: a session-level advisory lock, taken and held outside any
// transaction, so a `CREATE INDEX CONCURRENTLY` of the rollout (which waits for every open
// transaction) is never blocked by the rollout's own lock wait (flyway#1654).
#pragma once

#include <chrono>
#include <string>

#include "shardio/raw_conn.hpp"

namespace shardctl::schema {

// Advisory lock key (class, object): catalog::lock_class and "SCHM".
inline constexpr int rollout_lock_object = 0x5343484D;

// Polls pg_try_advisory_lock until it is granted or `timeout` passes (never blocks in
// pg_advisory_lock, which would sit in an open transaction). On timeout: a locked Error (75)
// naming the holder (pid, application_name, client, user, since when) from pg_locks and
// pg_stat_activity. `conn` must be in autocommit (no open transaction).
void acquire_rollout_lock(shardio::RawConn& conn, std::chrono::milliseconds timeout, const std::string& shard);
void release_rollout_lock(shardio::RawConn& conn);
// RESET ALL and release_rollout_lock in one round trip: how a rollout leaves a shard.
void reset_and_release_rollout_lock(shardio::RawConn& conn);

// "pid 123 (application_name psql, client local, user postgres, connected since ..., active)"
// (fields the server leaves empty are left out) or "another session" when the holder is not
// visible.
std::string describe_rollout_lock_holder(shardio::RawConn& conn);

// Whether some session holds the shard's rollout lock now (read from pg_locks, never taken).
bool rollout_lock_held(shardio::RawConn& conn);

}  // namespace shardctl::schema
