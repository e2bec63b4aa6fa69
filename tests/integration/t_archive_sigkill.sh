# Real SIGKILLs during archive runs, to both destinations: `op resume` always finishes the run
# with every cold row archived exactly once, and `archive restore` brings the fleet back to
# exactly its original rows.
# Every kill lands in flight, at a step boundary whatever the machine's speed: a reference run's
# trace must reach exactly the boundaries named for it (archive_points.inc: every step of every
# batch), and each run draws one of them (reproducibly; with CRASH_SLICE=i/n, one of its slice),
# stops itself there (SHARDCTL_FAULT_PAUSE, lib/fault/fault.hpp; both shards' workers are
# threads of the one process, so the whole run stops) and is then killed with SIGKILL, the
# signal no process can handle. Its own trace must end at the drawn boundary; the run must be
# left interrupted, and neither it nor its resume may reach a boundary the list does not name.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/archive_points.inc"
WHERE="created_at < '2024-02-15'"
BATCH=10
run_args=(archive run --table customers --where "$WHERE" --cascade --batch-size "$BATCH" --parallel 2)

fresh_fleet archkill_ref --shards 2
before=$(fleet_fingerprint)
cold=0 batches=()
for n in 1 2; do
  roots=$(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE")
  [ $(((roots + BATCH - 1) / BATCH)) -ge 3 ] || fail "fewer than 3 batches of cold customers on shard $n ($roots rows)"
  cold=$((cold + roots))
  batches+=("$(shard_name "$n"):$(((roots + BATCH - 1) / BATCH))")
done
archive_points "${batches[@]}"
SHARDCTL_FAULT_TRACE="$TEST_TMP/trace.ref" expect_exit 0 shardctl "${run_args[@]}" --to "dir:$TEST_TMP/ref"
require_points "the reference run (batches ${batches[*]})" "$TEST_TMP/trace.ref"
crash_slice

# stopped_at PID OUT AT: whether the run PID has stopped itself; fails at once if it has ended.
stopped_at() {
  local st=""
  read -r _ _ st _ 2>/dev/null < "/proc/$1/stat" || true
  [ "$st" != T ] || return 0
  [ -n "$st" ] && [ "$st" != Z ] || fail "the run ended before it reached $3: $(cat "$2")"
  return 1
}

# A run stopped at a fault point is never left behind, however the test ends (its databases
# are still dropped when it passes, lib.sh).
trap 'st=$?; [ -z "${pid:-}" ] || kill -KILL "$pid" 2>/dev/null; (exit $st); _drop_made_databases' EXIT
RANDOM=20261123  # reproducible kill points
for run in $(seq 1 6); do
  step "run $run"
  fresh_fleet archkill --shards 2
  kind=dir
  [ $((run % 2)) = 1 ] || kind=pg
  archive_destination "$kind" archkill
  at=${sliced[$((RANDOM % ${#sliced[@]}))]}
  step "run $run (${DEST%%:*}, killed at $at)"
  trace="$TEST_TMP/trace.$run"
  : >"$trace"
  SHARDCTL_FAULT_TRACE=$trace SHARDCTL_FAULT_PAUSE=$at \
    "$SHARDCTL_BIN/shardctl" "${run_args[@]}" --to "$DEST" >"$TEST_TMP/run.out" 2>&1 &
  pid=$!
  wait_until "the run to stop at $at" stopped_at "$pid" "$TEST_TMP/run.out" "$at"
  kill -9 "$pid"
  got=0
  wait "$pid" || got=$?
  pid=""
  assert_eq "$got" 137  # 128 + SIGKILL: it died of the kill, stopped where it was
  trace_points "$trace"
  assert_eq "${traced[-1]}" "$at"
  only_known_points "the killed run" "$trace"
  RUN=$(psql_catalog -XAtc "select op_id from shardctl.operations where kind = 'archive'")
  [ -n "$RUN" ] || fail "no archive run journaled"
  expect_exit 0 shardctl archive show "$RUN" --format json
  echo "# run $run: killed at boundary ${#traced[@]} of ${#required[@]} ($at): $(jq -r '.status + ", " + (.rows | tostring) + " rows archived"' "$STDOUT")"
  assert_eq "$(jq -r .status "$STDOUT")" interrupted
  SHARDCTL_FAULT_TRACE="$TEST_TMP/resume.$run" expect_exit 0 shardctl op resume "$RUN"
  only_known_points "the resumed run" "$TEST_TMP/resume.$run"
  expect_exit 0 shardctl archive show "$RUN" --format json
  assert_eq "$(jq -r .status "$STDOUT")" "done"
  assert_eq "$(jq -r '[.shards[].rows["public.customers"]] | add' "$STDOUT")" "$cold"
  for n in 1 2; do assert_eq "$(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE")" "0"; done
  if [ "${DEST%%:*}" = postgres ]; then
    assert_eq "$(psql -X -At "$ARCH_DSN" -c "select count(*) || ' ' || count(distinct customer_id) from public.customers")" "$cold $cold"
  fi
  expect_exit 0 shardctl archive restore "$RUN"
  after=$(fleet_fingerprint)
  [ "$after" = "$before" ] || fail "rows changed after archive + restore
before: $before
after:  $after"
done
pass
