# The planner balances live bytes, not dead space. Two of three shards lose 7
# of every 8 orders and order lines, as after an archive run or a move's purge, with no VACUUM
# FULL: their databases take as much disk as the full shard's. stats collect records live bytes
# beside physical ones, stats show prints both, and rebalance plan moves data off the full shard
# (it said "balanced" when it planned on physical sizes). A snapshot without live bytes (as an
# upgraded catalog holds) still loads and plans on physical sizes, with a note. rebalance apply
# batches each step as the same merge typed by hand (64 MB, or --batch-size), never by the
# config's [defaults] batch_size.
source "$(dirname "$0")/lib.sh"

fresh_fleet rblive --shards 3 --scale 2
for n in 2 3; do
  psql_shard "$n" -qc "delete from order_lines where customer_id % 8 <> 0" -c "delete from orders where customer_id % 8 <> 0" \
                     -c "vacuum analyze"
done
# The deleted rows' space stays in the tables: shards 2 and 3 take the disk shard_1 takes.
printf '[defaults]\nbatch_size = 50\n' > shardctl.toml

step "stats collect: live beside physical"
expect_exit 0 shardctl stats collect --format json
snap="$TEST_TMP/snap.json"
cp "$STDOUT" "$snap"
shard_field() { jq ".shards[] | select(.shard == \"$1\") | .$2" "$snap"; }
mapped_live() { jq "[.mappings[] | select(.shard == \"$1\") | .live_bytes] | add" "$snap"; }
p1=$(shard_field shard_1 db_bytes) p2=$(shard_field shard_2 db_bytes)
awk -v a="$p1" -v b="$p2" 'BEGIN { exit !(b > 0.9 * a && b < 1.1 * a) }' || fail "physical sizes differ: shard_1 $p1, shard_2 $p2"
l1=$(mapped_live shard_1) l2=$(mapped_live shard_2)
[ "$l2" -gt 0 ] && [ $((l2 * 4)) -lt "$l1" ] || fail "live bytes: shard_1 $l1, shard_2 $l2"
# Every mapping, slice and shard carries both; a shard's live bytes are at most its physical ones.
assert_eq "$(jq '[.mappings[] | .live_bytes != null and .live_bytes <= .bytes] | all' "$snap")" "true"
# The slices add up to their mapping (each rounded on its own).
assert_eq "$(jq '[.mappings[] | ((.histogram | map(.live_bytes) | add) - .live_bytes) | fabs <= 64] | all' "$snap")" "true"
assert_eq "$(jq '[.shards[] | .live_bytes != null and .live_bytes <= .db_bytes] | all' "$snap")" "true"
# Per shard, the dead space is what the deletes left: live = physical less 7/8 of the mapped
# physical bytes, give or take the indexes' share and page overhead.
mapped2=$(jq '[.mappings[] | select(.shard == "shard_2") | .bytes] | add' "$snap")
dead2=$((p2 - $(shard_field shard_2 live_bytes)))
awk -v d="$dead2" -v m="$mapped2" 'BEGIN { exit !(d > 0.75 * m && d < m) }' || fail "shard_2: $dead2 dead bytes of $mapped2 mapped"
[ "$(shard_field shard_1 live_bytes)" -gt "$(shard_field shard_2 live_bytes)" ] || fail "shard_1 not fuller than shard_2"

step "stats show prints both"
expect_exit 0 shardctl stats show
expect_stdout_contains "PHYSICAL"
expect_stdout_contains "LIVE"
line=$(grep '^shard_2 ' "$STDOUT" | head -1)
set -- $line  # SHARD STATUS PHYSICAL(n unit) LIVE(n unit) ...
[ "$3 $4" != "$5 $6" ] || fail "shard_2 shows one size twice: $line"

step "rebalance plan moves data off the full shard"
expect_exit 0 shardctl rebalance plan -o plan.json
steps=$(jq '.plan.steps | length' plan.json)
[ "$steps" -ge 1 ] || fail "no step: $(jq -c .plan.notes plan.json)"
assert_eq "$(jq '[.plan.steps[] | select(.from != "shard_1")] | length' plan.json)" "0"
assert_eq "$(jq '.plan.imbalance_after < .plan.imbalance_before' plan.json)" "true"
# shard_1 is planned as the live size stats show gives it (up to rounding).
planned=$(jq '.plan.shards[] | select(.shard == "shard_1") | .bytes_before' plan.json)
[ $((planned - $(shard_field shard_1 live_bytes))) -le 8 ] && [ $(($(shard_field shard_1 live_bytes) - planned)) -le 8 ] ||
  fail "shard_1 planned as $planned bytes, its live bytes are $(shard_field shard_1 live_bytes)"

step "apply batches a step as the same merge typed by hand"
# One step is enough to compare (and quicker to apply).
expect_exit 0 shardctl rebalance plan --max-moves 1 -o one.json
assert_eq "$(jq -c '.plan.steps[0]' one.json)" "$(jq -c '.plan.steps[0]' plan.json)"
steps=1
expect_exit 0 shardctl rebalance apply one.json --dry-run --format json
range=$(jq -r '.steps[0].range' "$STDOUT") to=$(jq -r '.steps[0].to' "$STDOUT") batches=$(jq '.steps[0].batches' "$STDOUT")
expect_exit 0 shardctl merge --map customers --range "$range" --into "$to" --dry-run --format json
assert_eq "$batches" "$(jq '.batches | length' "$STDOUT")"
expect_exit 0 shardctl rebalance apply one.json --dry-run --batch-size 20 --format json
assert_contains "$(jq -r '.steps[0].command' "$STDOUT")" "--batch-size 20"
batches20=$(jq '.steps[0].batches' "$STDOUT")
expect_exit 0 shardctl merge --map customers --range "$range" --into "$to" --dry-run --batch-size 20 --format json
assert_eq "$batches20" "$(jq '.batches | length' "$STDOUT")"
[ "$batches20" -gt "$batches" ] || fail "--batch-size 20 gave $batches20 batch(es), the default $batches"
expect_exit 64 shardctl rebalance apply one.json --batch-size 0
expect_stderr_contains "--batch-size must be at least 1"

step "apply: each shard lands on its predicted live size"
before=$(fleet_fingerprint)
expect_exit 0 shardctl rebalance apply one.json
assert_eq "$(grep -c ' done: ' "$STDOUT")" "$steps"
op=$(psql_catalog -XAtc "select op_id from shardctl.operations where args->'rebalance'->>'step' = '1'")
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.op_batches where op_id = '$op'")" "$batches"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
# No VACUUM FULL: what left shard_1 no longer counts there.
expect_sizes_as_planned one.json shard_1 shard_2 shard_3

step "a snapshot without live bytes loads and plans on physical sizes"
psql_catalog -qc "update shardctl.stats_mappings set live_bytes = null,
                    histogram = (select coalesce(jsonb_agg(e - 'live_bytes'), '[]') from jsonb_array_elements(histogram) e)" \
             -c "update shardctl.stats_shards set live_bytes = null"
expect_exit 0 shardctl stats show
expect_stdout_contains "live bytes: not measured"
expect_exit 0 shardctl stats show --format json
assert_eq "$(jq '[.mappings[].live_bytes, .shards[].live_bytes] | map(select(. != null)) | length' "$STDOUT")" "0"
expect_exit 0 shardctl rebalance plan --format json
expect_stderr_contains "has no live bytes (taken before shardctl measured them): planning on physical sizes"
physical=$(shardctl stats show --format json | jq '[.mappings[] | select(.shard == "shard_2") | .bytes] | add')
[ "$(jq '.plan.shards[] | select(.shard == "shard_2") | .bytes_before' "$STDOUT")" -ge "$physical" ] ||
  fail "shard_2 not planned on its physical size $physical"
pass
