# sandbox up/status/env/down: up twice is harmless, the sample data lands on the shard its
# key routes to, env works with psql, down leaves no server process and no directory.
source "$(dirname "$0")/lib.sh"

dir="$TEST_TMP/sb"
cleanup() { shardctl sandbox down --dir "$dir" >/dev/null 2>&1 || true; }
trap cleanup EXIT

expect_exit 0 shardctl sandbox up --dir "$dir" --shards 3 --scale 1
expect_stdout_contains "created $dir"
expect_stdout_contains "fleet demo"
[ -f "$TEST_TMP/shardctl.toml" ] || fail "up did not write ./shardctl.toml"
head -1 "$TEST_TMP/shardctl.toml" | grep -q "written by shardctl sandbox" || fail "no marker in ./shardctl.toml"

# Second up: nothing recreated, data untouched.
expect_exit 0 shardctl sandbox up --dir "$dir" --shards 3 --format json
assert_eq "$(jq -r .created "$STDOUT")" "false"
assert_eq "$(jq -r '.started | length' "$STDOUT")" "0"
assert_eq "$(jq -r '.fleets | length' "$STDOUT")" "1"

expect_exit 0 shardctl sandbox status --dir "$dir" --format json
assert_eq "$(jq -r .running "$STDOUT")" "true"
assert_eq "$(jq -r '[.clusters[] | select(.running)] | length' "$STDOUT")" "3"
pids=$(jq -r '.clusters[].pid' "$STDOUT")

# env: psql and shardctl find the sandbox.
( eval "$(shardctl sandbox env --dir "$dir")"
  [ "$(psql -X -Atc 'select count(*) from shardctl.shards')" = 3 ] || fail "psql via sandbox env"
  cd / && "$SHARDCTL_BIN/shardctl" shard list >/dev/null || fail "shardctl via sandbox env" )

# The sample data: 1000 customers, each on the shard the map routes it to, with orders and
# lines only for its own customers; reference data identical everywhere.
cd "$TEST_TMP"
shardctl shard list --format json > "$TEST_TMP/shards.json"
total=0
for i in 0 1 2; do
  name=$(jq -r ".shards[$i].name" "$TEST_TMP/shards.json")
  dsn=$(jq -r ".shards[$i].dsn" "$TEST_TMP/shards.json")
  psql -X -Atc "select customer_id from customers" "$dsn" > "$TEST_TMP/ids_$i"
  n=$(wc -l < "$TEST_TMP/ids_$i")
  [ "$n" -gt 0 ] || fail "$name holds no customers"
  total=$((total + n))
  wrong=$(shardctl lookup --map customers - < "$TEST_TMP/ids_$i" | awk -F'\t' -v s="$name" '$2 != s' | wc -l)
  assert_eq "$wrong" "0"
  assert_eq "$(psql -X -Atc "select count(*) from orders o where not exists (select 1 from customers c where c.customer_id = o.customer_id)" "$dsn")" "0"
  assert_eq "$(psql -X -Atc "select count(*) > 0 from order_lines" "$dsn")" "t"
  assert_eq "$(psql -X -Atc "select count(*) || ':' || sum(product_id) from product" "$dsn")" "200:20100"
done
assert_eq "$total" "1000"

# down: no server process and no directory left; our ./shardctl.toml removed.
expect_exit 0 shardctl sandbox down --dir "$dir"
for p in $pids; do
  state=$(ps -o stat= -p "$p" || true)
  [ -z "$state" ] || [[ "$state" == Z* ]] || fail "server $p still running after down ($state)"
done
! pgrep -f -- "$dir" >/dev/null || fail "a process still mentions $dir"
[ ! -e "$dir" ] || fail "$dir still exists"
[ ! -e "$TEST_TMP/shardctl.toml" ] || fail "./shardctl.toml left behind"

# An operator's own ./shardctl.toml is never overwritten.
echo 'catalog = "dbname=mine"' > "$TEST_TMP/shardctl.toml"
expect_exit 0 shardctl sandbox up --dir "$dir" --shards 1 --scale 0
assert_eq "$(cat "$TEST_TMP/shardctl.toml")" 'catalog = "dbname=mine"'
expect_exit 0 shardctl sandbox down --dir "$dir"
assert_eq "$(cat "$TEST_TMP/shardctl.toml")" 'catalog = "dbname=mine"'
expect_exit 0 shardctl sandbox status --dir "$dir"
expect_stdout_contains "no sandbox"
pass
