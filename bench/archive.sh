#!/usr/bin/env bash
# Benchmark: `shardctl archive run --cascade` against the raw limit, in the same run, on
# identical data. Three fleets of 2 shards get the same sample data (scale S: 1000*S customers,
# ~5000*S orders, ~15000*S order_lines; default S=200, 1,000,000 orders). Every order, with its
# order lines, is archived from both shards:
#   raw-pg   per shard, in parallel: `psql -c "COPY (SELECT *, shard, now() FROM t) TO STDOUT" |
#            psql -c "COPY archive.t FROM STDIN"` for orders then order_lines, then the same
#            DELETE (order_lines, then orders);
#   tool-pg  `shardctl archive run --table orders --where true --cascade --to postgres:...`;
#   raw-dir  per shard, in parallel: `COPY (...) TO STDOUT | zstd -3 > FILE`, then the DELETE;
#   tool-dir the same archive run with --to dir:...
# Usage: bench/archive.sh [BIN_DIR] [SCALE] [BATCH]
source "$(dirname "$0")/lib.sh" "${1:-}"
scale=${2:-200}
batch=${3:-5000}

sandbox_up --no-fleet
t0=$(now)
for f in rawpg toolpg rawdir tooldir; do
  "$bin/shardctl" sandbox fleet "$f" --dir "$work/sb" --shards 2 --scale "$scale" --format json > "$work/$f.json"
done
echo "loaded four fleets (scale $scale) in $(r "$(now) - $t0") s"
catalog_cluster=$(jq -r .catalog "$work/rawpg.json" | sed 's/dbname=[^ ]*//')
for db in arch_raw arch_tool; do psql -Xq "$catalog_cluster dbname=postgres" -c "create database $db"; done
shard() { jq -r ".shards[$(($2 - 1))].dsn" "$work/$1.json"; }
orders=$(( $(psql -XAtc "select count(*) from orders" "$(shard rawpg 1)") + $(psql -XAtc "select count(*) from orders" "$(shard rawpg 2)") ))
lines=$(( $(psql -XAtc "select count(*) from order_lines" "$(shard rawpg 1)") + $(psql -XAtc "select count(*) from order_lines" "$(shard rawpg 2)") ))
echo "archiving $orders orders and $lines order_lines from 2 shards"
for f in rawpg toolpg rawdir tooldir; do for n in 1 2; do psql -XAqc "vacuum analyze" "$(shard $f $n)"; done; done

raw_delete() {
  psql -XAtq "$1" <<'SQL'
BEGIN;
DELETE FROM order_lines;
DELETE FROM orders;
COMMIT;
SQL
}

# raw-pg: the archive tables as shardctl makes them (the source's columns + source_shard, archived_at).
arch_raw="$catalog_cluster dbname=arch_raw"
psql -Xq "$arch_raw" <<'SQL'
CREATE TABLE orders (customer_id bigint, order_id integer, ordered_at timestamptz, status text, source_shard text, archived_at timestamptz);
CREATE TABLE order_lines (customer_id bigint, order_id integer, line_no integer, product_id integer, quantity integer,
                          amount numeric(12,2), source_shard text, archived_at timestamptz);
CREATE INDEX ON orders (source_shard, archived_at);
CREATE INDEX ON order_lines (source_shard, archived_at);
SQL
raw_pg_shard() {
  local src=$1 name=$2
  for t in orders order_lines; do
    psql -XAtc "COPY (SELECT *, '$name'::text, now() FROM $t) TO STDOUT" "$src" | psql -XAtc "COPY $t FROM STDIN" "$arch_raw" >/dev/null
  done
  raw_delete "$src"
}
t0=$(now)
raw_pg_shard "$(shard rawpg 1)" shard_1 & p1=$!
raw_pg_shard "$(shard rawpg 2)" shard_2 & p2=$!
wait $p1 $p2
raw_pg=$(echo "$(now) - $t0" | bc -l)

raw_dir_shard() {
  local src=$1 name=$2
  mkdir -p "$work/rawdir/$name"
  for t in orders order_lines; do
    psql -XAtc "COPY (SELECT * FROM $t) TO STDOUT" "$src" | zstd -q -3 > "$work/rawdir/$name/$t.copy.zst"
  done
  raw_delete "$src"
}
t0=$(now)
raw_dir_shard "$(shard rawdir 1)" shard_1 & p1=$!
raw_dir_shard "$(shard rawdir 2)" shard_2 & p2=$!
wait $p1 $p2
raw_dir=$(echo "$(now) - $t0" | bc -l)
raw_dir_bytes=$(du -sb "$work/rawdir" | cut -f1)

tool() {  # FLEET DEST -> "seconds rss_kb"
  SHARDCTL_CATALOG=$(jq -r .catalog "$work/$1.json") /usr/bin/time -f "%e %M" -o "$work/time" \
    "$bin/shardctl" archive run --table orders --where true --cascade --to "$2" --batch-size "$batch" --parallel 2 \
    --format json > "$work/$1.out"
  cat "$work/time"
}
read -r tool_pg rss_pg <<<"$(tool toolpg "postgres:$catalog_cluster dbname=arch_tool")"
got=$(psql -XAtc "select (select count(*) from orders) + (select count(*) from order_lines)" "$catalog_cluster dbname=arch_tool")
[ "$got" = $((orders + lines)) ] || { echo "tool-pg archived $got rows, expected $((orders + lines))" >&2; exit 1; }
read -r tool_dir rss_dir <<<"$(tool tooldir "dir:$work/tooldir")"
run=$(jq -r .id "$work/tooldir.out")
manifest="$work/tooldir/$run/manifest.json"
got=$(jq '[.files[].rows] | add' "$manifest")
[ "$got" = $((orders + lines)) ] || { echo "tool-dir archived $got rows, expected $((orders + lines))" >&2; exit 1; }
raw_bytes=$(jq '[.files[].raw_bytes] | add' "$manifest")
zst_bytes=$(jq '[.files[].bytes] | add' "$manifest")

rows=$((orders + lines))
echo "raw COPY pipe + DELETE to postgres: $(r "$raw_pg") s ($(r "$rows / $raw_pg") rows/s)"
echo "shardctl to postgres:               $(r "$tool_pg") s ($(r "$rows / $tool_pg") rows/s), peak RSS $((rss_pg / 1024)) MB"
echo "throughput vs raw (postgres):       $(r "$raw_pg / $tool_pg")x (target >= 0.8)"
echo "raw COPY | zstd -3 + DELETE:        $(r "$raw_dir") s, $(r "$raw_dir_bytes / 1048576") MiB"
echo "shardctl to dir:                    $(r "$tool_dir") s ($(r "$rows / $tool_dir") rows/s), peak RSS $((rss_dir / 1024)) MB"
echo "throughput vs raw (dir):            $(r "$raw_dir / $tool_dir")x"
echo "dir: $(r "$raw_bytes / 1048576") MiB of COPY text -> $(r "$zst_bytes / 1048576") MiB zstd (ratio $(r "$raw_bytes / $zst_bytes")), $(r "$raw_bytes / 1048576 / $tool_dir") MiB/s of COPY text"
