#include "check/replication_leftovers.hpp"

#include "shardside/replication_cleanup.hpp"

namespace shardctl::check {

bool is_leftover(std::optional<journal::OperationStatus> status) noexcept { return !status || journal::is_over(*status); }

std::optional<Finding> replication_leftover(const std::string& shard, const shardside::ReplicationObject& object,
                                            std::optional<journal::OperationStatus> status) {
  if (!is_leftover(status)) return std::nullopt;
  const std::string& op = object.owner.op_id;
  bool slot = object.kind == shardside::ReplicationObjectKind::slot;
  Finding f;
  f.kind = slot ? Kind::leftover_slot : Kind::leftover_replication;
  f.shard = shard;
  f.object = std::string(shardside::to_text(object.kind)) + " " + object.name;
  f.count = 1;
  f.detail = std::string(shardside::to_text(object.kind)) + " of operation " + op +
             (status ? ", which is " + std::string(journal::to_text(*status)) : ", no such operation");
  if (slot)
    f.detail += " (wal_status " + (object.wal_status.empty() ? std::string("unknown") : object.wal_status) + ", " +
                (object.active_pid ? "streamed by process " + std::to_string(*object.active_pid) : "no process streams from it") +
                "): it keeps WAL on this shard's server until it is dropped";
  else if (object.kind == shardside::ReplicationObjectKind::subscription)
    f.detail += object.enabled ? " (enabled: it keeps streaming from its source)" : " (disabled)";
  else if (object.kind == shardside::ReplicationObjectKind::stream_watch)
    f.detail += " (its tables' triggers record the keys a replica-mode write changes)";
  f.detail += "; `shardctl op cancel " + op + "` drops it";
  // Without a journal entry the operator may prefer to see what that does: the same drop by hand.
  if (!status) f.detail += ", or on this shard: " + shardside::drop_statement(object);
  return f;
}

}  // namespace shardctl::check
