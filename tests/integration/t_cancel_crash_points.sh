# `op cancel` of an interrupted operation rolls back the batch in flight (offline or copied)
# and is itself crash-safe. What it proves, for a split of two batches stopped (SHARDCTL_FAULT,
# lib/fault/fault.hpp) after batch 2 went offline and was guarded, and after batch 2 was copied:
#  - an uninterrupted cancel from that state (the traced one) finishes it;
#  - a cancel killed (_exit 99) at every step boundary of that cancel (its fault points in
#    lib/migrate/runner.cpp, named STEP@CONTEXT:N, the same in every process), in one chain: the
#    first cancel is killed at the first boundary, the next cancel at the first boundary not yet
#    killed that it reaches, and so on, until a cancel finishes (exit 0); every boundary killed;
#  - after each (the uninterrupted cancel, every chain): the operation is cancelled with batch
#    1 done, every original row exists exactly once, unchanged, on the shard the map routes it
#    to, no offline range or mapping is left, the map is as batch 1 leaves it, and the keys of
#    the rolled-back batch are writable on the source again.
# No isolated kills: a cancel resumed after a kill reaches each later boundary with the journal
# and shards as the uninterrupted cancel has them (runner.cpp run(): purge the flipped batch 1,
# journal it done, roll batch 2 back, finish; each step idempotent).
source "$(dirname "$0")/lib.sh"


split_args=(split --map customers --at 150 --to shard_2 --batch-size 100)
expected="..150>shard_1 150..250>shard_2 250..501>shard_1 501..>shard_2"

check_cancelled() {
  expect_exit 0 shardctl op show "$op" --format json
  assert_eq "$(jq -r '.status + " " + (.batches_done | tostring)' "$STDOUT")" "cancelled 1"
  assert_fleet_consistent
  after=$(fleet_fingerprint)
  [ "$after" = "$before" ] || fail "data changed
before: $before
after:  $after"
  expect_exit 0 shardctl mapping list --map customers --format json
  assert_eq "$(jq -r '.mappings | map(.range + ">" + .shard) | join(" ")' "$STDOUT")" "$expected"
  # The keys of the rolled-back batch are writable on the source again.
  psql_shard 1 -qc "update customers set name = name where customer_id = 260" || fail "key 260 is not writable on shard_1"
}

# Where the operation is stopped before the cancel: after batch 2 went offline and guarded,
# and after it was copied.
total=0
for stop in offline.guard@b2:1 journal.copied@b2:1; do
  # The boundaries of one uninterrupted cancel from this state.
  step "uninterrupted cancel after $stop"
  fresh_fleet cancel_trace --shards 2
  before=$(fleet_fingerprint)
  SHARDCTL_FAULT=$stop expect_exit 99 shardctl "${split_args[@]}"
  op=$(last_op)
  rm -f "$TEST_TMP/trace"
  SHARDCTL_FAULT_TRACE="$TEST_TMP/trace" expect_exit 0 shardctl op cancel "$op"
  mapfile -t points < <(sed 's/ \([0-9]*\)$/:\1/' "$TEST_TMP/trace")
  [ "$(printf '%s\n' "${points[@]}" | sort | uniq -d)" = "" ] || fail "a boundary is named twice: ${points[*]}"
  [ "${#points[@]}" -ge 3 ] || fail "only ${#points[@]} step boundaries in a cancel: ${points[*]}"
  for p in rollback.target@b2:1 rollback.mapping@b2:1; do
    printf '%s\n' "${points[@]}" | grep -qxF "$p" || fail "the cancel has no boundary $p: ${points[*]}"
  done
  check_cancelled

  # One chain: kills at the boundaries in turn, then a cancel that finishes.
  step "chain after $stop"
  fresh_fleet cancel --shards 2
  SHARDCTL_FAULT=$stop expect_exit 99 shardctl "${split_args[@]}"
  op=$(last_op)
  left=("${points[@]}")
  chain=()
  while :; do
    rm -f "$TEST_TMP/run.trace"
    got=0
    SHARDCTL_FAULT=$(IFS=,; echo "${left[*]}") SHARDCTL_FAULT_TRACE="$TEST_TMP/run.trace" \
      "$SHARDCTL_BIN/shardctl" op cancel "$op" >"$STDOUT" 2>"$STDERR" || got=$?
    [ "$got" != 0 ] || break
    if [ "$got" != 99 ]; then
      echo "--- stdout:" >&2; head -c 4000 "$STDOUT" >&2
      echo "--- stderr:" >&2; head -c 4000 "$STDERR" >&2
      fail "expected exit 99 or 0, got $got: op cancel $op"
    fi
    [ -s "$TEST_TMP/run.trace" ] || fail "exit 99 before any step boundary"
    hit=$(tail -n 1 "$TEST_TMP/run.trace" | sed 's/ \([0-9]*\)$/:\1/')
    # The first cancel is the traced one up to its first boundary.
    [ "${#chain[@]}" -gt 0 ] || [ "$hit" = "${left[0]}" ] || fail "the first cancel was killed at $hit, not at ${left[0]}"
    rest=()
    for p in "${left[@]}"; do [ "$p" = "$hit" ] || rest+=("$p"); done
    [ "${#rest[@]}" = $((${#left[@]} - 1)) ] || fail "killed at $hit, which was not asked for"
    left=("${rest[@]}")
    chain+=("$hit")
    step "chain after $stop (cancel killed at ${chain[*]})"
  done
  [ "${#chain[@]}" -gt 0 ] || fail "the first cancel finished without reaching ${left[0]}, which the traced cancel reached"
  # Every boundary is reached again by a cancel resumed after a kill (see the header): none is
  # left for another chain.
  [ "${#left[@]}" = 0 ] || fail "the cancel finished without reaching ${left[*]}"
  check_cancelled
  echo "after $stop: ${#chain[@]} kills: ${chain[*]}"
  total=$((total + ${#chain[@]}))
done
echo "cancel boundaries killed: $total, chains: 2"
pass
