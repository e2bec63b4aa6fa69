# The target cluster stops in the middle of a split: the command exits 69 naming the shard;
# after the cluster is back, `op resume` completes with nothing lost. Uses a private sandbox
# so stopping a cluster does not disturb other tests.
source "$(dirname "$0")/lib.sh"

private_fleet down 2 2
before=$(fleet_fingerprint)

"$SHARDCTL_BIN/shardctl" split --map customers --at 100 --to shard_2 --batch-size 5 >"$TEST_TMP/split.out" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  done_batches=$(shardctl op list --format json | jq -r '.operations[0].batches_done // 0')
  [ "$done_batches" -ge 2 ] && break
  sleep 0.05
done
[ "$done_batches" -ge 2 ] || fail "the split made no progress"
# shard_2 lives on cluster shards2; stop it hard, as a crash would.
stop_cluster shards2
rc=0
wait "$pid" || rc=$?
assert_eq "$rc" "69"
grep -q "shard_2" "$TEST_TMP/split.out" || fail "the error does not name shard_2: $(cat "$TEST_TMP/split.out")"
op=$(last_op)
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r .status "$STDOUT")" "failed"
# The hint names the command that finishes this operation, with its id (not a placeholder).
grep -qF "shardctl op resume $op" "$TEST_TMP/split.out" || fail "the error does not say how to resume: $(cat "$TEST_TMP/split.out")"

shardctl sandbox up --dir "$PRIVATE_SANDBOX" --no-fleet -q >/dev/null   # restarts the stopped cluster
expect_exit 0 shardctl op resume "$op"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
