# `op cancel` of an interrupted operation rolls back the batch in flight (offline or copied)
# and is itself crash-safe: killed at every step boundary of the rollback, a second cancel
# finishes it. After each: every original row exists exactly once, unchanged, on the shard the
# map routes it to, no offline range or mapping is left, and the map is as the batches that
# were done leave it.
source "$(dirname "$0")/lib.sh"

split_args=(split --map customers --at 150 --to shard_2 --batch-size 100)
expected="..150>shard_1 150..250>shard_2 250..501>shard_1 501..>shard_2"

# Where the operation is stopped before the cancel: after batch 2 went offline and guarded,
# and after it was copied.
for stop in offline.guard:2 journal.copied:2; do
  # The boundaries of one cancel from this state.
  fresh_fleet cancel_trace --shards 2
  before=$(fleet_fingerprint)
  SHARDCTL_FAULT=$stop expect_exit 99 shardctl "${split_args[@]}"
  op=$(last_op)
  export SHARDCTL_FAULT_TRACE="$TEST_TMP/trace"
  rm -f "$SHARDCTL_FAULT_TRACE"
  expect_exit 0 shardctl op cancel "$op"
  unset SHARDCTL_FAULT_TRACE
  mapfile -t points < "$TEST_TMP/trace"
  [ "${#points[@]}" -ge 3 ] || fail "only ${#points[@]} step boundaries in a cancel: ${points[*]}"
  points+=("none 0")  # and a plain cancel
  for p in "${points[@]}"; do
    step=${p% *} n=${p#* }
    fresh_fleet cancel --shards 2
    SHARDCTL_FAULT=$stop expect_exit 99 shardctl "${split_args[@]}"
    op=$(last_op)
    if [ "$step" != none ]; then SHARDCTL_FAULT="$step:$n" expect_exit 99 shardctl op cancel "$op"; fi
    expect_exit 0 shardctl op cancel "$op"
    expect_exit 0 shardctl op show "$op" --format json
    assert_eq "$(jq -r '.status + " " + (.batches_done | tostring)' "$STDOUT")" "cancelled 1"
    assert_fleet_consistent
    after=$(fleet_fingerprint)
    [ "$after" = "$before" ] || fail "data changed when the cancel after $stop was killed at $step:$n
before: $before
after:  $after"
    expect_exit 0 shardctl mapping list --map customers --format json
    assert_eq "$(jq -r '.mappings | map(.range + ">" + .shard) | join(" ")' "$STDOUT")" "$expected"
    # The keys of the rolled-back batch are writable on the source again.
    psql_shard 1 -qc "update customers set name = name where customer_id = 260"
  done
done
pass
