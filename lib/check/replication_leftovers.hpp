// shardctl replication objects (an online move's publication, slot and subscription, named
// shardctl_op_<op id>_<batch>) that no live operation owns: what `shardctl check` reports about
// them. Pure: the sweep lists the objects and reads their operations' statuses.
#pragma once

#include <optional>
#include <string>

#include "check/finding.hpp"
#include "journal/journal.hpp"
#include "shardside/replication.hpp"

namespace shardctl::check {

// Whether an object named after an operation in `status` is left over: its operation is over
// (done or cancelled) or unknown to the catalog (none). A live operation (running, interrupted,
// paused, failed, planned) still owns its objects: its resume or cancel uses or drops them.
bool is_leftover(std::optional<journal::OperationStatus> status) noexcept;

// The finding `object` on `shard` is: none while its operation is live; else leftover_slot for
// a slot (it keeps WAL on the shard's server), leftover_replication for a publication or a
// subscription. The detail names the operation and its status, a slot's wal_status and the
// process streaming from it, and the fix: `shardctl op cancel ID`, and for an operation the
// catalog does not know, the SQL that drops the object by hand too.
std::optional<Finding> replication_leftover(const std::string& shard, const shardside::ReplicationObject& object,
                                            std::optional<journal::OperationStatus> status);

}  // namespace shardctl::check
