// Replication objects named after an operation: left over once the operation is over or
// unknown, never while it lives; slots critical, publications and subscriptions warnings; the
// detail names the operation, its status, a slot's WAL state and the fix. The drop order and the
// SQL that drops an object by hand (shardside/replication_cleanup.hpp).
#include <doctest/doctest.h>

#include "check/replication_leftovers.hpp"
#include "shardside/replication_cleanup.hpp"

using namespace shardctl;
using namespace shardctl::check;
using shardside::ReplicationObject;
using shardside::ReplicationObjectKind;
using journal::OperationStatus;

namespace {

const std::string op = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";

ReplicationObject object(ReplicationObjectKind kind) {
  ReplicationObject o;
  o.kind = kind;
  o.name = shardside::replication_name(op, 2);
  o.owner = *shardside::parse_replication_name(o.name);
  return o;
}

}  // namespace

TEST_CASE("left over: only when the operation is over or unknown") {
  CHECK(is_leftover(std::nullopt));
  CHECK(is_leftover(OperationStatus::done));
  CHECK(is_leftover(OperationStatus::cancelled));
  for (auto live : {OperationStatus::planned, OperationStatus::running, OperationStatus::interrupted,
                    OperationStatus::paused, OperationStatus::failed}) {
    CHECK_FALSE(is_leftover(live));
    CHECK_FALSE(replication_leftover("shard_1", object(ReplicationObjectKind::slot), live));
  }
}

TEST_CASE("a slot of a finished operation: critical kind, WAL state, op cancel") {
  auto o = object(ReplicationObjectKind::slot);
  o.wal_status = "reserved";
  auto f = replication_leftover("shard_1", o, OperationStatus::done);
  REQUIRE(f);
  CHECK(f->kind == Kind::leftover_slot);
  CHECK(default_severity(f->kind) == Severity::critical);
  CHECK(f->shard == "shard_1");
  CHECK(f->object == "slot shardctl_op_3f2504e04f8911d39a0c0305e82c3301_2");
  CHECK(f->count == 1);
  CHECK(f->detail == "slot of operation " + op +
                         ", which is done (wal_status reserved, no process streams from it): it keeps WAL on this "
                         "shard's server until it is dropped; `shardctl op cancel " + op + "` drops it");
  o.active_pid = 4242;
  f = replication_leftover("shard_1", o, OperationStatus::cancelled);
  REQUIRE(f);
  CHECK(f->detail.find(", which is cancelled (wal_status reserved, streamed by process 4242)") != std::string::npos);
}

TEST_CASE("objects of an unknown operation: the SQL that drops them by hand too") {
  auto slot = replication_leftover("s", object(ReplicationObjectKind::slot), std::nullopt);
  REQUIRE(slot);
  CHECK(slot->detail.find("slot of operation " + op + ", no such operation (wal_status unknown, ") == 0);
  CHECK(slot->detail.find("`shardctl op cancel " + op + "` drops it, or on this shard: SELECT "
                          "pg_drop_replication_slot('shardctl_op_3f2504e04f8911d39a0c0305e82c3301_2');") !=
        std::string::npos);

  auto pub = replication_leftover("s", object(ReplicationObjectKind::publication), std::nullopt);
  REQUIRE(pub);
  CHECK(pub->kind == Kind::leftover_replication);
  CHECK(default_severity(pub->kind) == Severity::warning);
  CHECK(pub->detail == "publication of operation " + op + ", no such operation; `shardctl op cancel " + op +
                           "` drops it, or on this shard: DROP PUBLICATION \"shardctl_op_3f2504e04f8911d39a0c0305e82c3301_2\";");

  auto sub = object(ReplicationObjectKind::subscription);
  auto f = replication_leftover("s", sub, OperationStatus::done);
  REQUIRE(f);
  CHECK(f->kind == Kind::leftover_replication);
  CHECK(f->detail == "subscription of operation " + op + ", which is done (disabled); `shardctl op cancel " + op + "` drops it");
  sub.enabled = true;
  CHECK(replication_leftover("s", sub, OperationStatus::done)->detail.find("(enabled: it keeps streaming from its source)") !=
        std::string::npos);
}

TEST_CASE("drops: subscription, then slot, then publication; the subscription without reaching its source") {
  CHECK(shardside::drop_order(ReplicationObjectKind::subscription) < shardside::drop_order(ReplicationObjectKind::slot));
  CHECK(shardside::drop_order(ReplicationObjectKind::slot) < shardside::drop_order(ReplicationObjectKind::publication));
  auto sub = object(ReplicationObjectKind::subscription);
  sub.name = "shardctl_op_x\"y";  // not a name shardctl makes: quoted all the same
  CHECK(shardside::drop_statement(sub) ==
        "ALTER SUBSCRIPTION \"shardctl_op_x\"\"y\" DISABLE; ALTER SUBSCRIPTION \"shardctl_op_x\"\"y\" SET (slot_name = NONE); "
        "DROP SUBSCRIPTION \"shardctl_op_x\"\"y\";");
  auto slot = object(ReplicationObjectKind::slot);
  slot.name = "a'b";
  CHECK(shardside::drop_statement(slot) == "SELECT pg_drop_replication_slot('a''b');");
}

TEST_CASE("a stream watch: a warning, dropped last, its rows deleted by hand") {
  CHECK(shardside::drop_order(ReplicationObjectKind::publication) < shardside::drop_order(ReplicationObjectKind::stream_watch));
  auto watch = object(ReplicationObjectKind::stream_watch);
  auto f = replication_leftover("shard_2", watch, OperationStatus::cancelled);
  REQUIRE(f);
  CHECK(f->kind == Kind::leftover_replication);
  CHECK(f->object == "stream_watch " + watch.name);
  CHECK(f->detail == "stream_watch of operation " + op +
                         ", which is cancelled (its tables' triggers record the keys a replica-mode write changes); "
                         "`shardctl op cancel " + op + "` drops it");
  watch.name = "a'b";
  CHECK(shardside::drop_statement(watch) ==
        "DELETE FROM shardctl.stream_watch WHERE stream = 'a''b'; DELETE FROM shardctl.stream_keys WHERE stream = 'a''b';");
}
