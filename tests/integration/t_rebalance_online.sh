# rebalance apply --online (shardctl-rebalance(1)): every step runs as the online merge or move
# its command line shows; --dry-run previews them with --online and changes nothing; a step
# whose source cannot stream (a moving table's replica identity lacks the key) is refused with
# exit 64 before anything changes; done, the fleet holds every row once where the map routes
# it, and no publication, slot or subscription of shardctl is left on any shard.
source "$(dirname "$0")/lib.sh"

fresh_fleet rbonline --shards 3 --scale 1
before=$(fleet_fingerprint)
# shard_3 gives its keys to shard_2: an empty shard, as one just added.
shardctl merge --map customers --range 667.. --into shard_2 >/dev/null
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan -o plan.json
steps=$(jq '.plan.steps | length' plan.json)
[ "$steps" -ge 1 ] || fail "no step planned"

step "dry run"
dump=$(catalog_dump)
expect_exit 0 shardctl rebalance apply plan.json --dry-run --online --cutover-timeout 3
assert_eq "$(grep -c '^step .* would run: shardctl merge --map customers --range .* --online --cutover-timeout 3 (' "$STDOUT")" "$steps"
assert_eq "$(catalog_dump)" "$dump"
expect_exit 64 shardctl rebalance apply plan.json --max-lag 2
expect_stderr_contains "--max-lag needs --online"

step "a source that cannot stream"
from=$(jq -r '.plan.steps[0].from' plan.json)
psql_shard "${from#shard_}" -qc "alter table orders replica identity nothing"
expect_exit 64 shardctl rebalance apply plan.json --online
expect_stderr_contains "its replica identity (NOTHING) does not include key column customer_id"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.operations where kind <> 'merge' or args ? 'online'")" "0"
psql_shard "${from#shard_}" -qc "alter table orders replica identity default"

step "apply"
expect_exit 0 shardctl rebalance apply plan.json --online
assert_eq "$(grep -c '^step .* done: shardctl merge .* --online' "$STDOUT")" "$steps"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.operations where args ? 'online' and status = 'done'")" "$steps"
for i in 1 2 3; do
  left=$(shardctl_streams "$i")
  [ -z "$left" ] || fail "replication objects of shardctl left on shard_$i: $left"
done
assert_fleet_consistent
after=$(fleet_fingerprint)
[ "$after" = "$before" ] || fail "data changed
before: $before
after:  $after"
pass
