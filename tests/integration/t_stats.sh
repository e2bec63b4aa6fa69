# stats collect / show on a sandbox fleet: rows and bytes per mapping match the shards, the
# histogram adds up, deltas appear on the second collect, the load file (good and bad), the
# config's capacity and weight, and an unreachable shard (69, nothing recorded).
source "$(dirname "$0")/lib.sh"

fresh_fleet stats --shards 3 --scale 1
snapshots() { psql_catalog -Atc "select count(*) from shardctl.stats_snapshots"; }

expect_exit 64 shardctl stats show
expect_stderr_contains "hint: run shardctl stats collect"

expect_exit 0 shardctl stats collect
expect_stdout_contains "snapshot 1 taken"
expect_stdout_contains "shard_3"
assert_eq "$(snapshots)" "1"

expect_exit 0 shardctl stats show --format json
show="$TEST_TMP/show1.json"
cp "$STDOUT" "$show"
# Rows per mapping: every row of the three sharded tables, counted on its own shard.
for n in 1 2 3; do
  want=$(psql_shard "$n" -Atc "select (select count(*) from customers) + (select count(*) from orders) + (select count(*) from order_lines)")
  got=$(jq "[.mappings[] | select(.shard == \"shard_$n\") | .rows] | add" "$show")
  assert_eq "$got" "$want"
  # Bytes: the tables' total size (heap + indexes + TOAST), apportioned to the one mapping.
  size=$(psql_shard "$n" -Atc "select pg_total_relation_size('customers') + pg_total_relation_size('orders') + pg_total_relation_size('order_lines')")
  got=$(jq "[.mappings[] | select(.shard == \"shard_$n\") | .bytes] | add" "$show")
  [ $((got - size)) -le 3 ] && [ $((size - got)) -le 3 ] || fail "shard_$n mapped bytes $got, tables hold $size"
  [ "$(jq ".shards[] | select(.shard == \"shard_$n\") | .db_bytes > $size" "$show")" == true ] || fail "db_bytes too small"
done
# The histogram tiles each mapping: its slices add up to the mapping, and start at its low bound.
assert_eq "$(jq '[.mappings[] | (.histogram | map(.rows) | add) == .rows] | all' "$show")" "true"
assert_eq "$(jq -r '.mappings[] | select(.shard == "shard_2") | [.low, .histogram[0].low] | join(" ")' "$show")" "334 334"
assert_eq "$(jq '[.mappings[].histogram | length] | min >= 16' "$show")" "true"
assert_eq "$(jq '.shards[0].deltas_per_second | length' "$show")" "0"
assert_eq "$(jq -r '.maps[0] | "\(.name) \(.kind) \(.key_type)"' "$show")" "customers range bigint"

# Writes between two collects show up as per-second deltas, on that shard only.
psql_shard 2 -qc "update orders set status = 'x' where customer_id < 400"
sleep 1
expect_exit 0 shardctl stats collect --format json
assert_eq "$(jq '.snapshot_id' "$STDOUT")" "2"
[ "$(jq '.shards[] | select(.shard == "shard_2") | .deltas_per_second.n_tup_upd > 0' "$STDOUT")" == true ] || fail "no update delta"
[ "$(jq '.shards[] | select(.shard == "shard_2") | .interval_seconds > 0' "$STDOUT")" == true ] || fail "no interval"
assert_eq "$(jq '.shards[] | select(.shard == "shard_1") | .deltas_per_second.n_tup_upd' "$STDOUT")" "0"
# Load follows the writes when there is no load file: the updated mapping carries it.
[ "$(jq '.mappings[] | select(.shard == "shard_2") | .load > 0' "$STDOUT")" == true ] || fail "no load on shard_2"

# A load file: per-key load, summed per mapping and per slice.
printf 'key,weight\n5,100\n400,7.5\n401,2.5\n' > load.csv
expect_exit 0 shardctl stats collect --map customers --load-file load.csv --format json
assert_eq "$(jq '.mappings[] | select(.shard == "shard_1") | .load' "$STDOUT")" "100"
assert_eq "$(jq '.mappings[] | select(.shard == "shard_2") | .load' "$STDOUT")" "10"
assert_eq "$(jq '.key_loads.customers | length' "$STDOUT")" "3"
expect_exit 0 shardctl stats show
expect_stdout_contains "load file load.csv"

before=$(snapshots)
printf '5,100\n6,abc\n' > bad.csv
expect_exit 65 shardctl stats collect --map customers --load-file bad.csv
expect_stderr_contains "bad.csv:2: weight 'abc' is not a number >= 0"
printf 'x7,1\n' > badkey.csv
expect_exit 65 shardctl stats collect --map customers --load-file badkey.csv
expect_stderr_contains "badkey.csv:1: 'x7' is not a valid bigint key"
expect_exit 64 shardctl stats collect --map customers --load-file missing.csv
expect_exit 64 shardctl stats collect --map nosuch
assert_eq "$(snapshots)" "$before"

# Capacity and weight come from the config and are recorded with the snapshot.
printf '[shards.shard_2]\ncapacity_bytes = 123456789\nweight = 2\n' > shardctl.toml
expect_exit 0 shardctl stats collect --format json
assert_eq "$(jq -c '.shards[] | select(.shard == "shard_2") | [.capacity_bytes, .weight]' "$STDOUT")" "[123456789,2]"
assert_eq "$(jq -c '.shards[] | select(.shard == "shard_1") | [.capacity_bytes, .weight]' "$STDOUT")" "[null,1]"
printf '[shards.shard_2]\ncapacity = 5\n' > shardctl.toml
expect_exit 65 shardctl stats collect
expect_stderr_contains "shardctl.toml:2:1: unknown key \"shards.shard_2.capacity\""
rm shardctl.toml

# --dry-run measures and records nothing.
before=$(snapshots)
expect_exit 0 shardctl stats collect --dry-run
expect_stdout_contains "dry run: nothing recorded"
assert_eq "$(snapshots)" "$before"

# An unreachable shard stops the collect (69) and records nothing: a snapshot without it would
# show it empty, and a plan would fill it. Marked offline, it is left out.
shardctl shard add shard_x --dsn "host=$SANDBOX_RUN port=6499 user=postgres dbname=nowhere" >/dev/null
expect_exit 69 shardctl stats collect --connect-timeout 2
expect_stderr_contains "shard shard_x"
expect_stderr_contains "no snapshot recorded"
expect_stderr_contains "--status offline"
assert_eq "$(snapshots)" "$before"
shardctl shard set shard_x --status offline >/dev/null
expect_exit 0 shardctl stats collect --format json
assert_eq "$(jq -r '.shards[] | select(.shard == "shard_x") | .status' "$STDOUT")" "offline"
pass
