# An archive run meets a split that moves some of the same keys. While the split is in flight,
# the archive leaves alone every key the split claims (the source's rows are guarded, the
# target's copies are not the target's yet): it archives the others and finishes. The claimed
# keys wait for the next run, which archives them from their new shard. Every row ends exactly
# once on the shard the map routes it to or in the archive, and restoring both runs brings
# back exactly the original fleet.
source "$(dirname "$0")/lib.sh"

fresh_fleet archmove --shards 2 --scale 1
before=$(fleet_fingerprint)
WHERE="customer_id < 120"
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 60 --to shard_2 --move lower \
  --batch-size 100 >"$TEST_TMP/split.out" 2>&1 &
spid=$!
wait_stopped "$spid" "the split" "$TEST_TMP/split.out"
# Keys 1..59 are offline on shard_1 and copied (unflipped) to shard_2.
assert_eq "$(psql_shard 2 -XAtc "select count(*) from customers where customer_id < 60")" "59"
expect_exit 0 shardctl archive run --table customers --where "$WHERE" --cascade --to "dir:$TEST_TMP/arch" --batch-size 200 --format json
RUN1=$(jq -r .id "$STDOUT")
assert_eq "$(jq -r '[.shards[].rows["public.customers"]] | add' "$STDOUT")" "60"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id < 60")" "59"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from customers where customer_id < 60")" "59"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id >= 60 and customer_id < 120")" "0"
kill -CONT "$spid"
wait "$spid" || fail "the split failed: $(cat "$TEST_TMP/split.out")"
assert_fleet_consistent
expect_exit 0 shardctl archive run --table customers --where "$WHERE" --cascade --to "dir:$TEST_TMP/arch" --batch-size 200 --format json
RUN2=$(jq -r .id "$STDOUT")
assert_eq "$(jq -r '.shards[] | select(.shard == "shard_2") | .rows["public.customers"]' "$STDOUT")" "59"
for n in 1 2; do assert_eq "$(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE")" "0"; done
expect_exit 0 shardctl archive restore "$RUN1"
expect_exit 0 shardctl archive restore "$RUN2"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
