# Two operations on overlapping ranges never run at once: the second gets exit 75, and so does
# resuming an operation another live process is running.
source "$(dirname "$0")/lib.sh"

fresh_fleet conc --shards 2 --scale 2
before=$(fleet_fingerprint)
"$SHARDCTL_BIN/shardctl" split --map customers --at 100 --to shard_2 --batch-size 5 >"$TEST_TMP/a.out" 2>&1 &
a=$!
for _ in $(seq 1 100); do
  op=$(last_op)
  [ -n "$op" ] && [ "$op" != null ] && break
  sleep 0.05
done
[ -n "$op" ] && [ "$op" != null ] || fail "the first split never started"
expect_exit 75 shardctl split --map customers --at 500 --to shard_2 --batch-size 5
expect_stderr_contains "already works on an overlapping range"
expect_exit 75 shardctl op resume "$op"
expect_stderr_contains "is being run by"
wait "$a" || fail "the first split failed: $(cat "$TEST_TMP/a.out")"
expect_exit 0 shardctl op wait "$op" --timeout 60
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
