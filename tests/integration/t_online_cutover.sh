# The cut-over of an online move (shardctl-split(1), "Online moves"), step by step, and what
# --online refuses before anything changes:
#  - writes to a batch's keys wait during its cut-over (an advisory lock wait, seen in
#    pg_stat_activity), they do not fail;
#  - a cut-over that passes --cutover-timeout gives up: the waiting READ COMMITTED write goes
#    on where it was (and reaches the target by the stream), the REPEATABLE READ one is refused
#    (SQLSTATE 55000, constraint shardctl_moving: its snapshot cannot see how the cut-over
#    ended); a transaction older than the cut-over holds every try, and after 10 tries the run
#    exits 75 naming that session (pid, user, application, state), and `op resume
#    --cutover-timeout 5` (journaled) finishes the move with the written row on the target;
#  - every run or resume that ends done leaves no publication, slot, subscription or stream-key
#    record on any shard (zoo_lib.sh, zoo_assert_no_streams);
#  - usage: --max-lag or --cutover-timeout without --online, a timeout of 0, and a moving table
#    whose replica identity lacks the key column, or is FULL over a column with no equality
#    (json, in an array or a composite too), are refused (64), nothing journaled;
#  - DDL on a moving table during the stream (a column added on the source) is detected: the
#    subscription fails to apply, the run exits 75 saying so; once the target's table matches,
#    `op resume` finishes with the new column's value moved;
#  - `op cancel` of a move killed after its last flip is refused (64, nothing changed), and
#    resume finishes it; its purge is held to the digest both servers took at the cut-over (a
#    value changed past the guard after the flip rolls it back);
#  - a cut-over that the target's lag would hold up does not start: with the target's apply
#    worker held (a SHARE lock on orders) and a change of the batch waiting in the stream, the
#    move waits for a better moment (deferred, -v) instead of holding writers, and cuts over,
#    none given up, once the lock goes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

fresh_fleet cutover --shards 2
ops_before() { shardctl op list --format json | jq '.operations | length'; }

step "refused before anything changes"
n=$(ops_before)
expect_exit 64 shardctl move --map customers --key 700 --to shard_1 --max-lag 1
expect_stderr_contains "--max-lag needs --online"
expect_exit 64 shardctl move --map customers --key 700 --to shard_1 --online --cutover-timeout 0
expect_stderr_contains "--cutover-timeout must be above 0"
psql_shard 2 -qc "alter table orders replica identity nothing"
expect_exit 64 shardctl move --map customers --key 700 --to shard_1 --online
expect_stderr_contains 'table "public"."orders": its replica identity (NOTHING) does not include key column customer_id'
expect_stderr_contains 'REPLICA IDENTITY USING INDEX'
psql_shard 2 -qc "alter table orders replica identity default"
# FULL identity on a column with no equality (json, also in an array or a composite): the
# target could not find the old row of an UPDATE or DELETE.
for i in 1 2; do
  psql_shard "$i" -qc "create type doc_pair as (a int, b json)" \
    -c "create table docs (customer_id bigint not null, doc json, docs json[], pair doc_pair, tags text[], v varchar(9))" \
    -c "create index on docs (customer_id)" -c "alter table docs replica identity full"
done
expect_exit 0 shardctl table add-sharded docs --map customers --key customer_id
# The first is named, with how many more; each made comparable in turn names the next.
expect_exit 64 shardctl move --map customers --key 700 --to shard_1 --online
expect_stderr_contains 'table "public"."docs": its replica identity is FULL and column doc (json) has no equality operator'
expect_stderr_contains "(and 2 more unmet requirements)"
expect_stderr_contains "jsonb for json"
on_docs() { for i in 1 2; do psql_shard "$i" -qc "$1"; done; }
on_docs "alter table docs alter column doc type jsonb"
expect_exit 64 shardctl move --map customers --key 700 --to shard_1 --online
expect_stderr_contains "column docs (json[]) has no equality operator"
expect_stderr_contains "(and 1 more unmet requirement)"
on_docs "alter table docs alter column docs type jsonb[]"
expect_exit 64 shardctl move --map customers --key 700 --to shard_1 --online --dry-run
expect_stderr_contains "column pair (doc_pair) has no equality operator"
grep -q "more unmet" "$STDERR" && fail "text[], varchar, jsonb and jsonb[] refused: $(cat "$STDERR")"
on_docs "alter table docs drop column pair"
expect_exit 0 shardctl move --map customers --key 700 --to shard_1 --online --dry-run
expect_exit 0 shardctl table remove docs
for i in 1 2; do psql_shard "$i" -qc "drop table docs" -c "drop type doc_pair"; done
assert_eq "$(ops_before)" "$n"
before=$(fleet_fingerprint)

step "writers wait at the cut-over"
# Held after its catch-up (online.caught_up), before its cut-over begins, the move sees a
# transaction opened on the source: older than every cut-over it tries, so each one waits for
# it and gives up (cut_over_waiters, lib/migrate/guard.cpp). Then held at the cut-over itself
# (online.cutover: the range in state cutover) while two writes of its keys wait there.
SHARDCTL_FAULT_PAUSE=online.caught_up:1,online.cutover:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 700 \
  --to shard_1 --online --cutover-timeout 0.001 >"$TEST_TMP/move.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the move after its catch-up" "$TEST_TMP/move.out"
op=$(last_op)
holder=t_online_cutover_holder_$$
session_open "$holder" "$(shard_dsn 2)"
session_send "$holder" "begin; select 1;"
holding() { sql_true "$(shard_dsn 2)" "select count(*) = 1 from pg_stat_activity where application_name = '$holder'
                                       and state = 'idle in transaction' and xact_start is not null"; }
wait_until "the holder's transaction to be open on shard_2" holding
holder_pid=$(session_pid "$holder")
holder_user=$(psql_shard 2 -XAtc "select usename from pg_stat_activity where pid = $holder_pid")
kill -CONT "$pid"
wait_stopped "$pid" "the move at its cut-over" "$TEST_TMP/move.out"
psql_shard 2 -XAtc "update customers set name = 'rc' where customer_id = 700" >"$TEST_TMP/rc.out" 2>&1 &
rc_pid=$!
# ON_ERROR_STOP off: after the refusal, psql prints its SQLSTATE and goes on (COMMIT rolls back).
psql -X -At -v ON_ERROR_STOP=0 "$(shard_dsn 2)" >"$TEST_TMP/rr.out" 2>&1 <<'SQL' &
\set VERBOSITY verbose
begin isolation level repeatable read;
select count(*) from customers;
update customers set name = 'rr' where customer_id = 701;
\echo rr-sqlstate=:SQLSTATE
commit;
SQL
rr_pid=$!
waiting_on_shard() {
  [ "$(psql_shard 2 -XAtc "select count(*) from pg_stat_activity where datname = current_database()
                           and wait_event_type = 'Lock' and wait_event = 'advisory'")" = 2 ]
}
wait_until "both writes to wait on the cut-over" waiting_on_shard

step "a cut-over past its time gives up: the waiting writes go on, REPEATABLE READ refused"
kill -CONT "$pid"
got=0
wait "$pid" || got=$?
[ "$got" = 75 ] || fail "the move exited $got, not 75: $(cat "$TEST_TMP/move.out")"
# What held it, as runner_online.cpp words it: the holder's session, by pid, user, application
# and state (guard.cpp, cut_over_waiters); the writes waiting on the cut-over are not what holds it.
held_by="of operation $op gave up 10 times; the last: transactions older than the cut-over were still open: pid $holder_pid (user $holder_user, application $holder, idle in transaction)"
grep -qF "$held_by" "$TEST_TMP/move.out" || fail "exit 75 does not name the session that held it [$held_by]: $(cat "$TEST_TMP/move.out")"
grep -q "op resume $op" "$TEST_TMP/move.out" || fail "exit 75 without the resume hint: $(cat "$TEST_TMP/move.out")"
session_close "$holder"
wait "$rc_pid" || fail "the READ COMMITTED write failed: $(cat "$TEST_TMP/rc.out")"
wait "$rr_pid" || fail "psql of the REPEATABLE READ write exited $?: $(cat "$TEST_TMP/rr.out")"
assert_eq "$(grep '^rr-sqlstate=' "$TEST_TMP/rr.out")" "rr-sqlstate=55000"
grep -q "ERROR:  55000: key 701 of public.customers is being moved by shardctl operation $op to shard shard_1;" "$TEST_TMP/rr.out" ||
  fail "the REPEATABLE READ write was not refused as being moved: $(cat "$TEST_TMP/rr.out")"
grep -q "^CONSTRAINT NAME:  shardctl_moving$" "$TEST_TMP/rr.out" ||
  fail "the REPEATABLE READ refusal names no shardctl_moving constraint: $(cat "$TEST_TMP/rr.out")"
assert_eq "$(psql_shard 2 -XAtc "select name from customers where customer_id = 700")" "rc"
[ "$(psql_shard 2 -XAtc "select name from customers where customer_id = 701")" != rr ] || fail "the refused REPEATABLE READ write is present"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from shardctl.guard_ranges where op_id = '$op'")" "0"

step "resume, with a cut-over time it can keep, finishes the move, the written row with it"
expect_exit 64 shardctl op resume "$op" --cutover-timeout -1
expect_stderr_contains "--cutover-timeout must be above 0"
expect_exit 0 shardctl op resume "$op" --cutover-timeout 5
zoo_assert_no_streams "resumed after the cut-over gave up"
assert_eq "$(psql_catalog -XAtc "select args->'online'->>'cutover_timeout_ms' from shardctl.operations where op_id = '$op'")" "5000"
assert_eq "$(psql_shard 1 -XAtc "select name from customers where customer_id = 700")" "rc"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from customers where customer_id = 700")" "0"
after=$(fleet_fingerprint)
# Exactly one row changed: customer 700's name.
assert_eq "$(diff <(echo "$before") <(echo "$after") | grep -c '^>')" "1"
assert_eq "$(diff <(echo "$before") <(echo "$after") | grep '^>' | cut -d' ' -f2-3)" "customers 1000"
assert_fleet_consistent

step "DDL on a moving table during the stream is detected"
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 300 --to shard_2 \
  --online >"$TEST_TMP/ddl.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the move" "$TEST_TMP/ddl.out"
op=$(last_op)
psql_shard 1 -qc "alter table orders add column note text" \
  -c "insert into orders values (300, 9100001, timestamptz '2025-01-01 00:00+00', 'ddl', 'x')"
kill -CONT "$pid"
got=0
wait "$pid" || got=$?
[ "$got" = 75 ] || fail "the move exited $got, not 75: $(cat "$TEST_TMP/ddl.out")"
grep -q "failed to apply batch 1's changes" "$TEST_TMP/ddl.out" || fail "no word of the failed apply: $(cat "$TEST_TMP/ddl.out")"
psql_shard 2 -qc "alter table orders add column note text"
expect_exit 0 shardctl op resume "$op"
zoo_assert_no_streams "resumed after the failed apply"
assert_eq "$(psql_shard 2 -XAtc "select note from orders where order_id = 9100001")" "x"
assert_fleet_consistent

step "cancel after the last flip is refused: the keys already live on the target"
SHARDCTL_FAULT=journal.flipped@b1:1 expect_exit 99 shardctl move --map customers --key 300 --to shard_1 --online
op=$(last_op)
expect_exit 64 shardctl op cancel "$op" --dry-run
expect_stderr_contains "has flipped every batch"
expect_exit 64 shardctl op cancel "$op"
expect_stderr_contains "operation $op has flipped every batch: the map routes its keys to shard_1"
expect_stderr_contains "shardctl op resume $op"
assert_eq "$(psql_catalog -XAtc "select cancel_requested from shardctl.operations where op_id = '$op'")" "f"
# Both servers digested the batch at the cut-over (verify_cut_over.cpp), and the purge holds
# its deletes to that digest: a value changed on the source past its guard after the flip (a
# superuser disabling it) makes the purge roll back, nothing deleted.
assert_eq "$(psql_catalog -XAtc "select b.checksum::jsonb->>'public.orders' like 'values:%' from shardctl.op_batches b where op_id = '$op'")" "t"
orders_300=$(psql_shard 2 -XAtc "select count(*) from orders where customer_id = 300")
[ "$orders_300" -gt 0 ] || fail "customer 300 has no orders on shard_2"
slip() {
  psql_shard 2 -qc "alter table orders disable trigger shardctl_guard, disable trigger shardctl_guard_update;
                    update orders set status = '$1' where order_id = 9100001;
                    alter table orders enable always trigger shardctl_guard, enable always trigger shardctl_guard_update"
}
status_was=$(psql_shard 2 -XAtc "select status from orders where order_id = 9100001")
slip slipped
expect_exit 70 shardctl op resume "$op"
expect_stderr_contains "rolled back"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from orders where customer_id = 300")" "$orders_300"
slip "$status_was"
expect_exit 0 shardctl op resume "$op"
zoo_assert_no_streams "resumed after its last flip"
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
assert_eq "$(psql_shard 1 -XAtc "select note from orders where order_id = 9100001")" "x"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from orders where customer_id = 300")" "0"
assert_fleet_consistent

step "a cut-over the target's lag would hold up does not start"
SHARDCTL_FAULT_PAUSE=online.compared:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 700 --to shard_2 --online -v \
  >"$TEST_TMP/defer.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the move" "$TEST_TMP/defer.out"
# A SHARE lock on the target's orders: the apply worker's writes wait for it, the readers of the
# comparison's snapshot do not.
psql_shard 2 -XAtq -c "begin" -c "lock table orders in share mode" -c "select pg_sleep(3)" -c "commit" >"$TEST_TMP/lock.out" 2>&1 &
lock_pid=$!
locked() { [ "$(psql_shard 2 -XAtc "select count(*) from pg_locks where relation = 'orders'::regclass and mode = 'ShareLock' and granted")" = 1 ]; }
wait_until "the SHARE lock on shard_2's orders" locked
lagged=$(psql_shard 1 -XAtc "select min(order_id) from orders where customer_id = 700")
psql_shard 1 -XAtqc "update orders set status = 'lagged' where customer_id = 700 and order_id = $lagged"
t_lock=$EPOCHREALTIME
kill -CONT "$pid"
wait "$pid" || fail "the move exited $?: $(cat "$TEST_TMP/defer.out")"
wait "$lock_pid" || fail "the lock holder failed: $(cat "$TEST_TMP/lock.out")"
zoo_assert_no_streams "the deferred move"
cut=$(grep -o 'cut-overs: .*' "$TEST_TMP/defer.out") || fail "no cut-over count in -v: $(cat "$TEST_TMP/defer.out")"
echo "# $cut (the lock held for 3 s from $(awk -v a="$t_lock" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s before the move ended)"
[[ "$cut" == "cut-overs: 1, given up 0, deferred "[1-9]* ]] || fail "the lagging target was not waited out before the cut-over: $cut"
held=$(echo "$cut" | sed 's/.*held writers \([0-9]*\) ms/\1/')
[ "$held" -lt 1000 ] || fail "the cut-over held writers $held ms: it started before the lag was gone"
assert_eq "$(psql_shard 2 -XAtc "select status from orders where customer_id = 700 and order_id = $lagged")" "lagged"
assert_fleet_consistent
pass
