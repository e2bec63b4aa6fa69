#!/usr/bin/env bash
# Benchmark: `shardctl split` against the raw limit, in the same run, on identical data.
# Two fleets of 2 shards get the same sample data (scale S: 1000*S customers, ~15*S thousand
# order_lines; default S=67, about 1,000,000 order_lines). The upper half of shard_1 moves to
# shard_2: in fleet "raw" with `psql -c "COPY (SELECT ...) TO STDOUT (FORMAT binary)" | psql -c
# "COPY t FROM STDIN (FORMAT binary)"` per table (parents first) plus the same DELETE (children
# first); in fleet "tool" with `shardctl split`. Usage: bench/split.sh [BIN_DIR] [SCALE] [BATCH]
source "$(dirname "$0")/lib.sh" "${1:-}"
scale=${2:-67}
batch=${3:-1000}

sandbox_up --no-fleet
t0=$(now)
"$bin/shardctl" sandbox fleet raw --dir "$work/sb" --shards 2 --scale "$scale" --format json > "$work/raw.json"
"$bin/shardctl" sandbox fleet tool --dir "$work/sb" --shards 2 --scale "$scale" --format json > "$work/tool.json"
echo "loaded two fleets (scale $scale) in $(echo "$(now) - $t0" | bc -l | cut -c1-5) s"

src=$(jq -r '.shards[0].dsn' "$work/raw.json")
dst=$(jq -r '.shards[1].dsn' "$work/raw.json")
customers=$((1000 * scale))
first=$((customers / 4 + 1))   # shard_1 holds [1, customers/2 + 1); move its upper half
last=$((customers / 2 + 1))
lines=$(psql -XAtc "select count(*) from order_lines where customer_id >= $first and customer_id < $last" "$src")
total_lines=$(( $(psql -XAtc "select count(*) from order_lines" "$src") + $(psql -XAtc "select count(*) from order_lines" "$dst") ))
echo "fleet: $total_lines order_lines; moving customers [$first, $last): $lines order_lines"

# Raw limit: COPY pipe per table, then DELETE.
t0=$(now)
for t in customers orders order_lines; do
  psql -XAtc "COPY (SELECT * FROM $t WHERE customer_id >= $first AND customer_id < $last) TO STDOUT (FORMAT binary)" "$src" |
    psql -XAtc "COPY $t FROM STDIN (FORMAT binary)" "$dst" >/dev/null
done
raw_copy=$(echo "$(now) - $t0" | bc -l)
t0=$(now)
delete_customers "$src" $first $last
raw_delete=$(echo "$(now) - $t0" | bc -l)

# shardctl split on the twin fleet.
export SHARDCTL_CATALOG=$(jq -r .catalog "$work/tool.json")
/usr/bin/time -f "%e %M" -o "$work/time" "$bin/shardctl" split --map customers --at "$first" --to shard_2 \
  --batch-size "$batch" -v 2> "$work/split.err" >/dev/null
read -r tool_total rss_kb < "$work/time"
tool_copy=$(sed -n 's/.*time: copy \([0-9.]*\) s.*/\1/p' "$work/split.err")
times=$(grep "time:" "$work/split.err")
moved=$(psql -XAtc "select count(*) from order_lines where customer_id >= $first and customer_id < $last" \
  "$(jq -r '.shards[1].dsn' "$work/tool.json")")
[ "$moved" = "$lines" ] || { echo "shardctl moved $moved order_lines, expected $lines" >&2; exit 1; }

echo "raw pipe: copy $(r "$raw_copy") s, delete $(r "$raw_delete") s, total $(r "$raw_copy + $raw_delete") s"
echo "shardctl: total $(r "$tool_total") s ($times), peak RSS $((rss_kb / 1024)) MB, batch size $batch"
echo "copy throughput vs raw pipe: $(r "$raw_copy / $tool_copy")x (target >= 0.8)"
echo "whole split vs raw pipe + delete: $(r "$tool_total / ($raw_copy + $raw_delete)")x (target <= 2.0)"
