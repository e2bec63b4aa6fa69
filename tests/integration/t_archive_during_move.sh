# An archive run meets a split that moves the same keys: while the split's batch is offline,
# the source's write guard refuses the archive's DELETE, so the archive batch rolls back and the
# run stops with 75 (resumable), having deleted nothing it did not archive. After the split, the
# archive run is resumed and finishes; every row is exactly once on the shard the map routes it
# to or in the archive, and a restore brings back exactly the original fleet.
source "$(dirname "$0")/lib.sh"

fresh_fleet archmove --shards 2 --scale 1
before=$(fleet_fingerprint)
WHERE="customer_id < 120"
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 60 --to shard_2 --move lower \
  --batch-size 100 >"$TEST_TMP/split.out" 2>&1 &
spid=$!
wait_stopped "$spid" "the split" "$TEST_TMP/split.out"
expect_exit 75 shardctl archive run --table customers --where "$WHERE" --cascade --to "dir:$TEST_TMP/arch" --batch-size 200
expect_stderr_contains "held by another operation"
RUN=$(psql_catalog -XAtc "select op_id from shardctl.operations where kind = 'archive'")
expect_exit 0 shardctl archive show "$RUN" --format json
assert_eq "$(jq -r .rows "$STDOUT")" "0"
kill -CONT "$spid"
wait "$spid" || fail "the split failed: $(cat "$TEST_TMP/split.out")"
expect_exit 0 shardctl op resume "$RUN"
expect_exit 0 shardctl archive show "$RUN" --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
for n in 1 2; do assert_eq "$(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE")" "0"; done
assert_eq "$(jq -r '[.shards[].rows["public.customers"]] | add' "$STDOUT")" "119"
expect_exit 0 shardctl archive restore "$RUN"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
