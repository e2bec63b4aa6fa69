// Replication objects named after an operation (shardctl_op_<op id>_<batch>: publications,
// slots, subscriptions of online moves) that are still on shards once nothing runs it any more:
// `shardctl op cancel` of an operation that is over, or that the catalog does not know, drops
// them (shardctl-op(1); `shardctl check` reports them as leftover_slot and leftover_replication).
// A live operation's objects are its runner's: its own cancel drops them (runner_online.cpp).
#pragma once

#include <string>
#include <vector>

#include "pg/connection.hpp"
#include "shardside/replication.hpp"

namespace shardctl::migrate {

struct LeftoverStream {
  std::string shard;
  shardside::ReplicationObject object;
};

// Every object named after `op_id` on the catalog's shards not marked offline; unless
// `dry_run`, dropped too: subscriptions on every shard first (their senders then let go of the
// slots), then slots, then publications. Every shard is listed before anything is dropped, so
// an unreachable shard (69) changes nothing; each drop is idempotent, so running it again after
// any failure finishes the job. Returned in the order they are (or would be) dropped. `op_id`
// is an operation id (journal::is_operation_id); the caller decides that no live operation
// owns its objects.
std::vector<LeftoverStream> drop_leftover_streams(pg::Connection& catalog, const std::string& op_id, bool dry_run);

}  // namespace shardctl::migrate
