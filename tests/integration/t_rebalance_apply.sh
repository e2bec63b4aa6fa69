# rebalance apply: --dry-run previews every step as merge --dry-run does (a failed precondition:
# exit 64, the step named) and changes nothing; old stats and a changed map are refused (65);
# the plan runs as journaled operations (in parallel), leaves the fleet consistent with every
# row once and the measured live sizes within 10% of the prediction; a kill -9 in the middle of an
# operation, then the same apply again, finishes it; a second apply of a done plan does
# nothing.
source "$(dirname "$0")/lib.sh"

fresh_fleet rbapply --shards 3 --scale 2
before=$(fleet_fingerprint)
# shard_3 gives its keys to shard_2: an empty shard, as one just added (the deleted rows'
# space stays in its tables; the planner counts live bytes).
shardctl merge --map customers --range 1334.. --into shard_2 >/dev/null
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan -o plan.json
steps=$(jq '.plan.steps | length' plan.json)
[ "$steps" -ge 1 ] || fail "no step planned"

# --dry-run: the steps as commands, nothing changed.
dump=$(catalog_dump)
expect_exit 0 shardctl rebalance apply plan.json --dry-run
expect_stdout_contains "step 1 would run: shardctl merge --map customers --range"
expect_exit 0 shardctl rebalance apply plan.json --dry-run --format json
assert_eq "$(jq '.steps | length' "$STDOUT")" "$steps"
# Each step previewed as `merge --dry-run` previews it: rows and batches planned on the sources.
assert_eq "$(jq '[.steps[] | select(.status == "would run" and .batches >= 1 and .rows_moved > 0)] | length' "$STDOUT")" "$steps"
assert_eq "$(catalog_dump)" "$dump"
# A step whose preconditions fail (an unregistered table on its source references the moving
# orders): every step is shown, that one as "would fail" with the reason, exit 64 as the merge
# itself would give, nothing changed.
from=$(jq -r '.steps[0].from' "$STDOUT")
range=$(jq -r '.steps[0].range' "$STDOUT")
psql_shard "${from#shard_}" -qc "create table audit_notes (note_id int primary key, customer_id bigint, order_id int,
                                   constraint audit_notes_order_fk foreign key (customer_id, order_id) references orders on delete cascade)"
expect_exit 64 shardctl rebalance apply plan.json --dry-run
expect_stdout_contains "step 1 would fail: shardctl merge --map customers --range $range --into"
expect_stderr_contains "table public.audit_notes references public.orders (constraint audit_notes_order_fk, ON DELETE CASCADE) on $from"
assert_eq "$(grep -c '^step ' "$STDOUT")" "$steps"
assert_eq "$(catalog_dump)" "$dump"
psql_shard "${from#shard_}" -qc "drop table audit_notes"

# Stats older than --max-age: 65, naming the snapshot.
sleep 1.2
expect_exit 65 shardctl rebalance apply plan.json --max-age 1s
expect_stderr_contains "older than --max-age"
expect_stderr_contains "snapshot 1"
# A malformed or edited plan file: 65.
echo '{"format": "something else"}' > bad.json
expect_exit 65 shardctl rebalance apply bad.json
jq '.plan.steps[0].to = "shard_1"' plan.json > edited.json
expect_exit 65 shardctl rebalance apply edited.json
expect_stderr_contains "edited after it was made"
expect_exit 64 shardctl rebalance apply missing.json
assert_eq "$(catalog_dump)" "$dump"

# The apply itself, two steps at a time (never two on one shard).
expect_exit 0 shardctl rebalance apply plan.json --parallel 2 --max-age 1h --batch-size 200
assert_eq "$(grep -c ' done: ' "$STDOUT")" "$steps"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
[ "$(psql_shard 3 -XAtc "select count(*) from customers")" -gt 0 ] || fail "nothing moved to shard_3"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.rebalance_steps where status = 'done'")" "$steps"
# Measured right after the apply (no VACUUM FULL: the rows that left a shard no longer count
# in its live bytes): each shard within 10% of the size the plan predicted.
expect_sizes_as_planned plan.json shard_1 shard_2 shard_3
# Applying a finished plan again runs nothing.
expect_exit 0 shardctl rebalance apply plan.json
assert_eq "$(grep -c ' skipped: ' "$STDOUT")" "$steps"

# A plan whose map changed since: 65, naming the map and both versions.
shardctl merge --map customers --range 1334.. --into shard_1 >/dev/null
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan -o plan2.json
v=$(jq '.maps[0].version' plan2.json)
shardctl split --map customers --at 1900 --to shard_2 >/dev/null
dump=$(catalog_dump)
expect_exit 65 shardctl rebalance apply plan2.json
expect_stderr_contains "map customers changed since the plan was made: planned at version $v, now at version"
assert_eq "$(catalog_dump)" "$dump"

# kill -9 in the middle of a step (its first batch copied, not yet flipped), then the same apply again finishes the plan.
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan -o plan3.json
[ "$(jq '.plan.steps | length' plan3.json)" -ge 1 ] || fail "no step planned for the kill test"
SHARDCTL_FAULT_PAUSE=copy.commit "$SHARDCTL_BIN/shardctl-rebalance" apply plan3.json --batch-size 200 >"$TEST_TMP/killed.out" 2>&1 &
pid=$!
wait_stopped "$pid" "rebalance apply" "$TEST_TMP/killed.out"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.rebalance_steps where status = 'running' and op_id is not null")" "1"
expect_exit 0 shardctl rebalance apply plan3.json --batch-size 200
expect_stdout_contains "resumed plan"
expect_stderr_contains "resuming operation"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.rebalance_steps s join shardctl.rebalance_runs r using (plan_fingerprint)
                                 where r.plan->>'fingerprint' = '$(jq -r .fingerprint plan3.json)' and s.status <> 'done'")" "0"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
