# Real SIGKILL at random moments during a split, ten times: `op resume` always finishes it with
# every row present exactly once, unchanged, on the shard its key routes to.
# Every kill lands while the split is in flight, between step boundaries, whatever the
# machine's speed: the moment is drawn in the split's own progress (a random number of the step
# boundaries it reports through SHARDCTL_FAULT_TRACE, lib/fault/fault.hpp, counted on a
# reference run), not in time; and the split stops itself (SHARDCTL_FAULT_PAUSE) at its last
# boundary before it is marked done, so a kill that comes late still finds it unfinished. Each
# run fails unless the split was left unfinished; at least half must be killed before that last
# boundary.
source "$(dirname "$0")/lib.sh"

split_args=(split --map customers --at 100 --to shard_2 --batch-size 25)
last_step="unguard 1"  # lib/migrate/runner.cpp: Runner::finish, before the operation is marked done

# Reference run: the boundaries a whole split passes, and the rows it must leave as they are.
fresh_fleet kill_ref --shards 2
before=$(fleet_fingerprint)
SHARDCTL_FAULT_TRACE="$TEST_TMP/trace.ref" expect_exit 0 shardctl "${split_args[@]}"
last_at=$(grep -nxF "$last_step" "$TEST_TMP/trace.ref" | cut -d: -f1)
[ -n "$last_at" ] && [ "$last_at" -gt 10 ] ||
  fail "reference split: its trace lacks the boundary '$last_step' (or has too few before it): $(tr '\n' ',' < "$TEST_TMP/trace.ref" | head -c 600)"

RANDOM=20261122  # reproducible kill points
before_last=0
# The watch on the trace uses builtins only (mapfile; read -t on a FIFO nobody writes as its
# nap): forking a wc and a sleep a hundred times a second takes the CPU the split runs on.
mkfifo "$TEST_TMP/nap"
exec {nap}<>"$TEST_TMP/nap"
passed() { mapfile -t _trace < "$trace"; [ "${#_trace[@]}" -ge "$k" ]; }
for run in $(seq 1 10); do
  fresh_fleet kill --shards 2
  trace="$TEST_TMP/trace.$run"
  : >"$trace"
  k=$((1 + RANDOM % (last_at - 1)))  # killed once it has passed k boundaries, before the last
  SHARDCTL_FAULT_TRACE=$trace SHARDCTL_FAULT_PAUSE="${last_step/ /:}" \
    "$SHARDCTL_BIN/shardctl" "${split_args[@]}" >"$TEST_TMP/split.out" 2>&1 &
  pid=$!
  for ((i = 0; i < 12000; i++)); do  # a hang guard of two minutes and more
    passed && break
    kill -0 "$pid" 2>/dev/null || fail "run $run: the split ended before it was killed: $(cat "$TEST_TMP/split.out")"
    read -r -t 0.01 -u "$nap" _ || true
  done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  passed || fail "run $run: the split never passed $k step boundaries: $(cat "$TEST_TMP/split.out")"
  at=$(tail -1 "$trace")
  [ "$at" = "$last_step" ] || before_last=$((before_last + 1))
  op=$(last_op)
  [ -n "$op" ] && [ "$op" != null ] || fail "run $run (killed after $at): no operation journaled"
  expect_exit 0 shardctl op show "$op" --format json
  status=$(jq -r .status "$STDOUT")
  echo "# run $run: killed after boundary $(wc -l < "$trace") of $last_at ($at), $(jq -r '"\(.batches_done) of \(.batches)"' "$STDOUT") batches done"
  # Killed mid-way: journaled as running, but nobody runs it; wait says so at once.
  [ "$status" = interrupted ] || fail "run $run (killed after $at): status $status, want interrupted (the kill did not land in flight)"
  expect_exit 69 shardctl op wait "$op"
  expect_stderr_contains "op resume $op"
  expect_exit 0 shardctl op resume "$op"
  expect_exit 0 shardctl op show "$op" --format json
  [ "$(jq -r .status "$STDOUT")" = done ] || fail "run $run (killed after $at): status $(jq -r .status "$STDOUT") after resume, want done"
  assert_fleet_consistent
  after=$(fleet_fingerprint)
  [ "$after" = "$before" ] || fail "run $run (killed after $at): data changed
before: $before
after:  $after"
done
[ "$before_last" -ge 5 ] || fail "only $before_last of 10 kills landed before the split's last boundary ($last_step)"
pass
