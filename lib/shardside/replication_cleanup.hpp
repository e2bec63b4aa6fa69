// Dropping shardctl replication objects found on a shard (list_replication_objects) rather than
// made by this process: `shardctl op cancel` of an operation that is over, and the fix that
// `shardctl check` names for an object no live operation owns. Kept apart from replication.hpp,
// whose calls the online runner makes for the objects of its own streams.
#pragma once

#include <string>

#include "shardio/raw_conn.hpp"
#include "shardside/replication.hpp"

namespace shardctl::shardside {

// The order one stream's objects are dropped in, on every shard at once: the subscription
// first (its sender then releases the slot), then the slot, then the publication. Lower first.
int drop_order(ReplicationObjectKind kind) noexcept;

// Drops one object with the idempotent drop of its kind (drop_subscription, drop_slot,
// drop_publication). Returns whether it was there.
bool drop_replication_object(shardio::RawConn& db, const ReplicationObject& object);

// The SQL an operator runs by hand, on the object's own database, to drop it as
// drop_replication_object() does: e.g. SELECT pg_drop_replication_slot('shardctl_op_..._1').
// Pure: the names are shardctl's ([a-z0-9_]), quoted all the same.
std::string drop_statement(const ReplicationObject& object);

}  // namespace shardctl::shardside
