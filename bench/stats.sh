#!/usr/bin/env bash
# Benchmark: `shardctl stats collect` on the sandbox at scale S (default 100: 100,000 customers
# and about 2.1 million rows in its sharded tables, over 4 shards), against a target of 10 s. Runs the
# collect twice (the second also computes per-second deltas against the first) and prints each
# wall time, its ratio to 10 s, peak RSS, the rows it counted, and the load average.
# Usage: bench/stats.sh [BIN_DIR] [SCALE]
source "$(dirname "$0")/lib.sh" "${1:-}"
scale=${2:-100}
target=10

t0=$(now)
sandbox_up --scale "$scale"
echo "sandbox at scale $scale loaded in $(r "$(now) - $t0") s"
eval "$("$bin/shardctl" sandbox env --dir "$work/sb")"
cd "$work"
echo "fleet: $("$bin/shardctl" shard list --format json | jq '.shards | length') shards"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

for run in 1 2; do
  /usr/bin/time -f "%e %M" -o "$work/time" "$bin/shardctl" stats collect --format json > "$work/snap.json"
  read -r wall rss_kb < "$work/time"
  mappings=$(jq '.mappings | length' "$work/snap.json")
  rows=$(jq '[.mappings[].rows] | add' "$work/snap.json")
  echo "collect $run: $(r "$wall") s wall, $(r "$wall / $target")x the ${target} s target, peak RSS $((rss_kb / 1024)) MB;" \
    "$mappings mappings, $rows rows counted (all sharded tables)"
done
echo "uptime: $(uptime)"
