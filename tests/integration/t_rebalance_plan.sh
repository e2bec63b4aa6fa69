# rebalance plan on a sandbox fleet: no snapshot (64 + hint); an empty shard gets data; --drain
# empties a shard; readonly and offline shards are never targets; --exclude-shard, --max-moves,
# --max-bytes; stale stats refused; -o writes the plan file with map versions and the stats
# fingerprint.
source "$(dirname "$0")/lib.sh"

fresh_fleet rbplan --shards 3 --scale 2
expect_exit 64 shardctl rebalance plan
expect_stderr_contains "hint: run shardctl stats collect"

# shard_3 gives its keys to shard_2: it is now an empty shard, as one just added. Its tables
# keep the deleted rows' space (no VACUUM FULL): the planner counts live bytes only.
shardctl merge --map customers --range 1334.. --into shard_2 >/dev/null
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan --format json
plan="$TEST_TMP/plan.json"
cp "$STDOUT" "$plan"
[ "$(jq '.plan.steps | length' "$plan")" -ge 1 ] || fail "no step"
assert_eq "$(jq '[.plan.steps[] | select(.to == "shard_3")] | length > 0' "$plan")" "true"
assert_eq "$(jq '[.plan.steps[] | select(.from == .to or .to == "shard_2")] | length' "$plan")" "0"
assert_eq "$(jq '.plan.shards[] | select(.shard == "shard_3") | .bytes_after > .bytes_before' "$plan")" "true"
assert_eq "$(jq '.plan.imbalance_after < .plan.imbalance_before' "$plan")" "true"
assert_eq "$(jq -r '.maps[0].name' "$plan")" "customers"
assert_eq "$(jq '.maps[0].version' "$plan")" "$(psql_catalog -Atc "select version from shardctl.maps where name = 'customers'")"
assert_eq "$(jq -r '.stats.fingerprint' "$plan")" "$(shardctl stats show --format json | jq -r .fingerprint)"

# Text: steps and bars for every shard.
expect_exit 0 shardctl rebalance plan
expect_stdout_contains "shard_3"
expect_stdout_contains "stats snapshot"

# -o writes the same plan as a file for apply; stdout still shows it.
expect_exit 0 shardctl rebalance plan -o out.json
expect_stderr_contains "plan written to out.json"
assert_eq "$(jq -r .format out.json)" "shardctl-rebalance-plan"
assert_eq "$(jq -c '.plan.steps' out.json)" "$(jq -c '.plan.steps' "$plan")"
[ -n "$(jq -r .fingerprint out.json)" ] || fail "no fingerprint"

# Limits.
expect_exit 0 shardctl rebalance plan --max-moves 1 --format json
[ "$(jq '.plan.steps | length' "$STDOUT")" -le 1 ] || fail "--max-moves 1 gave more steps"
expect_exit 0 shardctl rebalance plan --max-bytes 10k --format json
[ "$(jq '[.plan.steps[].bytes] | add // 0' "$STDOUT")" -le 10240 ] || fail "--max-bytes exceeded"
assert_eq "$(jq '.options.max_bytes' "$STDOUT")" "10240"
expect_exit 0 shardctl rebalance plan --exclude-shard shard_3 --format json
assert_eq "$(jq '[.plan.steps[] | select(.to == "shard_3" or .from == "shard_3")] | length' "$STDOUT")" "0"
expect_exit 64 shardctl rebalance plan --max-bytes lots
expect_exit 64 shardctl rebalance plan --drain nosuch
expect_exit 64 shardctl rebalance plan --objective speed

# --drain: shard_1 gives all its keys away and receives nothing.
expect_exit 0 shardctl rebalance plan --drain shard_1 --format json
assert_eq "$(jq '[.plan.steps[] | select(.to == "shard_1")] | length' "$STDOUT")" "0"
mapped=$(shardctl stats show --format json | jq '[.mappings[] | select(.shard == "shard_1") | .live_bytes] | add')
assert_eq "$(jq '[.plan.steps[] | select(.from == "shard_1") | .bytes] | add' "$STDOUT")" "$mapped"

# Readonly and offline shards never receive data.
for status in readonly offline; do
  shardctl shard set shard_3 --status "$status" >/dev/null
  expect_exit 0 shardctl rebalance plan --format json
  assert_eq "$(jq '[.plan.steps[] | select(.to == "shard_3")] | length' "$STDOUT")" "0"
done
shardctl shard set shard_3 --status online >/dev/null

# A map changed since the collect: the snapshot no longer describes it.
shardctl split --map customers --at 1000 --to shard_1 >/dev/null
expect_exit 64 shardctl rebalance plan
expect_stderr_contains "describes map customers at version"
expect_stderr_contains "hint: run shardctl stats collect"
pass
