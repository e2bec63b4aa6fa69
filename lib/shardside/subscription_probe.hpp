// Whether a target's server can reach a source the way an online move's subscription will
// (replication.hpp, create_subscription), asked before the move creates anything: the
// subscription connects from the target's server, where the source's connection string may
// not work even when it works from shardctl's host (another network, pg_hba.conf, no ~/.pgpass
// for the server's OS user). Kept apart from replication.hpp, whose calls make the objects of a
// stream; this one leaves none.
#pragma once

#include <optional>
#include <string>

#include "shardio/raw_conn.hpp"

namespace shardctl::shardside {

// Runs CREATE SUBSCRIPTION with `source_dsn` on `target` in a transaction it rolls back: the
// server opens the same replication connection to the source that the real subscription will
// (connect = true), and keeps nothing (no slot, no copy, slot_name = NONE, disabled). Returns
// the server's message (one line, never a password) when it could not connect, none when it
// could. Any other failure (the role may not create subscriptions: check_target() says so
// first) throws as RawConn::fail types it.
std::optional<std::string> subscription_connect_error(shardio::RawConn& target, const std::string& source_dsn);

}  // namespace shardctl::shardside
