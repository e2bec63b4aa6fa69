#!/usr/bin/env bash
# Benchmark: `shardctl check --orphans` over a 4-shard fleet against the single-database
# anti-join over the same rows, in the same run. Scale S gives 1000*S customers, ~5000*S orders
# and ~15000*S order_lines (default S=340: ~1.7M orders, ~5.1M order_lines). Damage: about
# 0.1% of the orders are deleted under their lines (within-shard orphans), and lines whose
# customer the map routes to another shard, with no order anywhere, are added on shard_1
# (cross-shard orphans). The single database gets every order and order_line of the fleet,
# with the same primary keys. Both sides are VACUUM ANALYZEd first.
# Usage: bench/check.sh [BIN_DIR] [SCALE] [PARALLEL]
source "$(dirname "$0")/lib.sh" "${1:-}"
scale=${2:-340}
parallel=${3:-2}

sandbox_up --no-fleet
t0=$(now)
"$bin/shardctl" sandbox fleet tool --dir "$work/sb" --shards 4 --scale "$scale" --format json > "$work/tool.json"
echo "loaded the fleet (scale $scale) in $(r "$(now) - $t0") s"
shard() { jq -r ".shards[$(($1 - 1))].dsn" "$work/tool.json"; }
catalog=$(jq -r .catalog "$work/tool.json")
customers=$((1000 * scale))

# Damage. Within each shard: 0.1% of the orders go, their lines stay.
for i in 1 2 3 4; do
  psql -XAtq "$(shard $i)" -c "set session_replication_role = replica;
    delete from orders where (customer_id * 7 + order_id) % 1000 = 0"
done
# Across shards: on shard_1, lines of customers of shard_3's range for orders that exist nowhere.
low=$((customers / 2 + 1))
psql -XAtq "$(shard 1)" -c "set session_replication_role = replica;
  insert into order_lines select c, 1000 + (c % 7), 1, 1, 1, 1.00
  from generate_series($low, $low + $((customers / 1000)) - 1) c"

# The single database: the same orders and order_lines, primary keys, no foreign keys.
single="${catalog%dbname=*}dbname=bench_single"
psql -XAtq "${catalog%dbname=*}dbname=postgres" -c "create database bench_single"
psql -XAtq "$single" <<'SQL'
CREATE TABLE orders (customer_id bigint NOT NULL, order_id integer NOT NULL, ordered_at timestamptz NOT NULL,
  status text NOT NULL, PRIMARY KEY (customer_id, order_id));
CREATE TABLE order_lines (customer_id bigint NOT NULL, order_id integer NOT NULL, line_no integer NOT NULL,
  product_id integer NOT NULL, quantity integer NOT NULL, amount numeric(12,2) NOT NULL,
  PRIMARY KEY (customer_id, order_id, line_no));
SQL
for i in 1 2 3 4; do
  for t in orders order_lines; do
    psql -XAtc "COPY $t TO STDOUT (FORMAT binary)" "$(shard $i)" | psql -XAtqc "COPY $t FROM STDIN (FORMAT binary)" "$single"
  done
done
for i in 1 2 3 4; do psql -XAtq "$(shard $i)" -c "VACUUM ANALYZE orders" -c "VACUUM ANALYZE order_lines"; done
psql -XAtq "$single" -c "VACUUM ANALYZE orders" -c "VACUUM ANALYZE order_lines"
lines=$(psql -XAtc "select count(*) from order_lines" "$single")
orders=$(psql -XAtc "select count(*) from orders" "$single")
echo "fleet: 4 shards, $orders orders, $lines order_lines"

# Single-database anti-join.
t0=$(now)
single_orphans=$(psql -XAtc "select count(*) from order_lines l where not exists
  (select 1 from orders o where o.customer_id = l.customer_id and o.order_id = l.order_id)" "$single")
single_time=$(echo "$(now) - $t0" | bc -l)

# shardctl check.
export SHARDCTL_CATALOG=$catalog
t0=$(now)
/usr/bin/time -v -o "$work/time" "$bin/shardctl-check" --orphans --parallel "$parallel" --format json > "$work/check.json" || true
tool_time=$(echo "$(now) - $t0" | bc -l)
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
tool_orphans=$(jq -r .summary.orphans "$work/check.json")
cross=$(jq -r '[.findings[] | .detail | capture("(?<n>[0-9]+) across").n | tonumber] | add' "$work/check.json")
[ "$tool_orphans" = "$single_orphans" ] ||
  { echo "shardctl found $tool_orphans orphans, the single database $single_orphans" >&2; exit 1; }

echo "orphans: $tool_orphans ($(r "100 * $tool_orphans / $lines")% of lines; $cross across shards), equal on both sides"
echo "single-database anti-join: $(r "$single_time") s"
echo "shardctl check --orphans --parallel $parallel: $(r "$tool_time") s, peak RSS $((rss_kb / 1024)) MB"
echo "ratio: $(r "$tool_time / $single_time")x (target <= 1.5), RSS target < 256 MB"
