# A check beside a split: keys of an operation that runs at any time during the sweep are
# neither reported nor fixed, and a fix never runs beside a move of the same map (exit 75).
# The check's own fault point check.shard:N (SIGSTOP before its N-th shard, --parallel 1 sweeps
# shard_1, shard_2, shard_3 in order) lets an operation finish, or run from start to end,
# between two shards' sweeps: deterministic, no timing.
source "$(dirname "$0")/lib.sh"

fresh_fleet check_during_move --shards 3 --scale 1
# customers ..334 on shard_1, 334..667 on shard_2, 667.. on shard_3
before=$(fleet_fingerprint)
map_id=$(psql_catalog -XAtc "select map_id from shardctl.maps where name = 'customers'")
lock_class=1397244740  # catalog::lock_class, "SHCD"
lock_key="$lock_class, hashtext('map-data:' || $map_id)"
# Sessions holding the map's data lock in `mode` (ShareLock or ExclusiveLock), other than ours.
# Advisory locks are per database, and tests running beside this one use the same key (map 1)
# in their own catalog databases on the same cluster: count this catalog's only.
holders() {
  psql_catalog -XAtc "select count(*) from pg_locks where locktype = 'advisory' and classid = $lock_class
                        and database = (select oid from pg_database where datname = current_database())
                        and objid::text::bigint = (hashtext('map-data:' || $map_id)::bigint & 4294967295)
                        and objsubid = 2 and mode = '$1' and granted and pid <> pg_backend_pid()"
}

# 1. A split paused right after its first batch (10 keys) is done: a report check sees nothing.
split_app=t_check_during_move_split_$$
PGAPPNAME=$split_app SHARDCTL_FAULT_PAUSE=journal.done:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 200 --to shard_3 \
  --batch-size 10 >"$TEST_TMP/split.out" 2>&1 &
split=$!
wait_stopped $split "the split" "$TEST_TMP/split.out"
op=$(last_op)
# Batch 2 is flipped and waits for its purge (beside batch 3's verify): its rows are on both
# shards, guarded on the source. What the fixes below must not change is this state.
paused=$(fleet_fingerprint)
expect_exit 0 shardctl check --orphans --strays --format json --parallel 1
assert_eq "$(jq -c .findings "$STDOUT")" "[]"

# 2. A fix while the split's process lives: exit 75 naming the operation, nothing changed.
# The refusal rests on the split's own hold on the map's data lock (SHARED, taken by
# Engine::hold_map_lock, lib/migrate/engine.cpp, on its catalog session): the held split's
# session, known by its application_name, must hold it, and nothing else may.
split_holds() {
  psql_catalog -XAtc "select count(*) from pg_locks l join pg_stat_activity a using (pid)
                        where l.locktype = 'advisory' and l.classid = $lock_class and l.objsubid = 2
                        and l.database = (select oid from pg_database where datname = current_database())
                        and l.objid::text::bigint = (hashtext('map-data:' || $map_id)::bigint & 4294967295)
                        and l.mode = 'ShareLock' and l.granted and a.application_name = '$split_app'"
}
assert_eq "$(split_holds) $(holders ShareLock)" "1 1"
assert_eq "$(psql_catalog -XAtc "select status || ' ' || lease_holder from shardctl.operations where op_id = '$op'")" \
  "running $(hostname):$split"
for fix in delete quarantine rehome; do
  expect_exit 75 shardctl check --fix $fix --yes --parallel 1
  expect_stderr_contains "cannot fix rows of map customers while an operation moves its data: $op (split, running)"
  expect_stderr_contains "shardctl op wait $op"
done
expect_exit 75 shardctl check --restore
expect_exit 0 shardctl check --orphans --fix delete --dry-run --parallel 1  # a dry run takes no lock
assert_eq "$(fleet_fingerprint)" "$paused"

# 3. The split finishes between two shards' sweeps of one check: shard_3 then holds rows the
# check's first view routed to shard_1 (cross-shard orphans, strays to a stale router). The
# operation was live when the check began: its keys are left out.
SHARDCTL_FAULT_PAUSE=check.shard:2 "$SHARDCTL_BIN/shardctl" check --orphans --strays --format json --parallel 1 \
  >"$TEST_TMP/check1.json" 2>"$TEST_TMP/check1.err" &
chk=$!
wait_stopped $chk "the check" "$TEST_TMP/check1.err"
kill -CONT $split
wait $split || fail "the split failed: $(cat "$TEST_TMP/split.out")"
kill -CONT $chk
rc=0; wait $chk || rc=$?
assert_eq "$rc $(jq -c .findings "$TEST_TMP/check1.json")" "0 []"
assert_eq "$(fleet_fingerprint)" "$before"

# 4. A move that starts and ends between two shards' sweeps (..200 from shard_1 to shard_3,
# after shard_1 was swept): not live when the check began, created during it, left out too.
SHARDCTL_FAULT_PAUSE=check.shard:2 "$SHARDCTL_BIN/shardctl" check --orphans --strays --format json --parallel 1 \
  >"$TEST_TMP/check2.json" 2>"$TEST_TMP/check2.err" &
chk=$!
wait_stopped $chk "the check" "$TEST_TMP/check2.err"
expect_exit 0 shardctl move --map customers --key 50 --to shard_3 --batch-size 100
kill -CONT $chk
rc=0; wait $chk || rc=$?
assert_eq "$rc $(jq -c .findings "$TEST_TMP/check2.json")" "0 []"
assert_eq "$(fleet_fingerprint)" "$before"
assert_fleet_consistent

# 5. A fix still removes real damage once nothing moves, and holds the lock while it runs: a
# move (a shared taker) cannot start beside it.
psql_shard 3 -qc "set session_replication_role = replica; delete from orders where customer_id = 700 and order_id = 1"
lines=$(psql_shard 3 -XAtc "select count(*) from order_lines where customer_id = 700 and order_id = 1")
SHARDCTL_FAULT_PAUSE=check.shard:1 "$SHARDCTL_BIN/shardctl" check --orphans --fix quarantine --format json --parallel 1 \
  >"$TEST_TMP/fix.json" 2>"$TEST_TMP/fix.err" &
chk=$!
wait_stopped $chk "the fix" "$TEST_TMP/fix.err"
assert_eq "$(holders ExclusiveLock)" "1"
assert_eq "$(psql_catalog -XAtc "select pg_try_advisory_lock_shared($lock_key)")" "f"
kill -CONT $chk
rc=0; wait $chk || rc=$?
assert_eq "$rc $(jq -c '[.fixes[] | [.shard, .table, .rows]]' "$TEST_TMP/fix.json")" "0 [[\"shard_3\",\"public.order_lines\",$lines]]"
# The lock goes with the fix's catalog session, whose backend ends a moment after the process.
for _ in $(seq 1 100); do [ "$(holders ExclusiveLock)" = 0 ] && break; sleep 0.1; done
assert_eq "$(holders ExclusiveLock)" "0"
expect_exit 0 shardctl check --orphans --strays --format json
pass
