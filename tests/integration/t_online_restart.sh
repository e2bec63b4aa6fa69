# Online moves through server restarts (shardctl-split(1), "Online moves"): the source's
# server, then the target's, stops hard while a batch's stream waits to catch up. The run exits
# 69 naming the shard, resumable; after the server is back, `op resume` catches up (the
# subscription's worker reconnects; the slot kept every change) and finishes: the rows written
# on the source during the stream are on the target, every row exactly once, no replication
# object left. Then the source's server invalidates a batch's slot (max_slot_wal_keep_size):
# the run exits 75 saying so; `op cancel` leaves the source as it was and no replication
# object; `op resume` copies the batch again on a new stream and finishes. A private sandbox,
# so stopping its clusters (and its tiny WAL limit) disturbs no other test.
source "$(dirname "$0")/lib.sh"

private_fleet restart 2 1
before=$(fleet_fingerprint)

# online_through_restart CLUSTER SHARD KEY TO: a move of KEY's mapping to TO held after its
# first batch's stream is made, 5 orders written to the moving keys on the source, CLUSTER
# (holding SHARD) stopped; the run exits 69 naming SHARD; resumed once CLUSTER is back.
online_through_restart() {
  local cluster=$1 shard=$2 key=$3 to=$4 src pid rc op i
  SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" move --map customers --key "$key" --to "$to" \
    --online >"$TEST_TMP/move.out" 2>&1 &
  pid=$!
  wait_stopped "$pid" "the move" "$TEST_TMP/move.out"
  op=$(last_op)
  src=$(shardctl lookup --map customers "$key" | cut -f2)
  # Committed durably: the fixture's servers run synchronous_commit = off, whose last commits
  # an immediate stop may lose on the source itself.
  psql_shard "${src#shard_}" -qc "set synchronous_commit = on" -c "insert into orders
    select $key, $((9000000 + key * 10)) + i, timestamptz '2025-01-01 00:00+00', 'restart' from generate_series(1, 5) i"
  stop_cluster "$cluster"
  kill -CONT "$pid"
  rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 69 ] || fail "the move exited $rc, not 69: $(cat "$TEST_TMP/move.out")"
  grep -q "$shard" "$TEST_TMP/move.out" || fail "the error does not name $shard: $(cat "$TEST_TMP/move.out")"
  shardctl sandbox up --dir "$PRIVATE_SANDBOX" --no-fleet -q >/dev/null   # restarts the stopped cluster
  expect_exit 0 shardctl op resume "$op"
  assert_eq "$(psql_shard "${to#shard_}" -XAtc "select count(*) from orders where status = 'restart' and customer_id = $key")" "5"
}
step "the source restarts"
online_through_restart shards2 shard_2 700 shard_1
step "the target restarts"
online_through_restart shards2 shard_2 300 shard_2

# slot_lost_run: a move of key 300's mapping (shard_2 to shard_1) held after its stream is
# made, 5 orders written to the moving keys on the source, then WAL written and a checkpoint
# until the source's server invalidates the slot (max_slot_wal_keep_size = 1MB): the run exits
# 75 saying so, resumable and cancellable. Leaves $op.
slot_lost_run() {
  local pid rc slot
  SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 300 --to shard_1 \
    --online >"$TEST_TMP/move.out" 2>&1 &
  pid=$!
  wait_stopped "$pid" "the move" "$TEST_TMP/move.out"
  op=$(last_op)
  psql_shard 2 -qc "insert into orders
    select 300, 9300000 + i, timestamptz '2025-01-01 00:00+00', 'lost' from generate_series(1, 5) i
    on conflict do nothing"
  slot=$(shardctl_streams 2 | tr ' ' '\n' | sort -u | head -1)
  psql_shard 2 -q <<'SQL'
create table wal_pad as select g, repeat('x', 200) pad from generate_series(1, 100000) g;
select pg_switch_wal();
insert into wal_pad select * from wal_pad;
select pg_switch_wal();
checkpoint;
drop table wal_pad;
SQL
  assert_eq "$(psql_shard 2 -XAtc "select wal_status from pg_replication_slots where slot_name = '$slot'")" "lost"
  kill -CONT "$pid"
  rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 75 ] || fail "the move exited $rc, not 75: $(cat "$TEST_TMP/move.out")"
  grep -q "the replication slot $slot on shard_2 was invalidated" "$TEST_TMP/move.out" ||
    fail "the error does not say the slot was invalidated: $(cat "$TEST_TMP/move.out")"
  grep -q "max_slot_wal_keep_size = 1MB" "$TEST_TMP/move.out" || fail "the error does not name the setting: $(cat "$TEST_TMP/move.out")"
}
step "the source invalidates the slot: the move stops (75), cancel leaves the source as it was"
orders_300=$(psql_shard 2 -XAtc "select count(*) from orders where customer_id = 300")
psql_shard 2 -qc "alter system set max_slot_wal_keep_size = '1MB'" -c "select pg_reload_conf()"
slot_lost_run
expect_exit 0 shardctl op cancel "$op"
for i in 1 2; do
  left=$(shardctl_streams "$i")
  [ -z "$left" ] || fail "replication objects of shardctl left on shard_$i after the cancel: $left"
done
assert_eq "$(psql_shard 2 -XAtc "select count(*) from orders where customer_id = 300")" "$((orders_300 + 5))"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from orders where customer_id = 300")" "0"
step "the source invalidates the slot again: resume copies the batch on a new stream"
slot_lost_run
expect_exit 0 shardctl op resume "$op"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from orders where customer_id = 300")" "$((orders_300 + 5))"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from orders where customer_id = 300")" "0"
psql_shard 2 -qc "alter system reset max_slot_wal_keep_size" -c "select pg_reload_conf()"

for i in 1 2; do
  left=$(shardctl_streams "$i")
  [ -z "$left" ] || fail "replication objects of shardctl left on shard_$i: $left"
done
step "the fleet"
assert_fleet_consistent
# The rows written during the streams are the only change.
after=$(fleet_fingerprint)
assert_eq "$(diff <(echo "$before") <(echo "$after") | grep '^>' | cut -d' ' -f2 | sort -u)" "orders"
pass
