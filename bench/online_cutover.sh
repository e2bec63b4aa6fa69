#!/usr/bin/env bash
# Benchmark: the writers' waits at online cut-overs when they write the moving keys hard, with
# default options, against the offline move of the same rows in the same run.
#
# Two twin fleets of 2 shards get the same sample data (scale S: 1000*S customers with their
# orders and order lines; half = S*500 + 1, shard_1 holds customers below it). Two ranges of
# shard_1 move to shard_2, one after the other, each as ONE batch:
#   "64 MB":  the SMALL customers below half, `split --at` with default options (one batch of
#             the default 64 MB);
#   "512 MB": the BIG customers below those, `split --at ... --batch-size BIG` (one batch of
#             about 512 MB of heap and index at the defaults S=600 and BIG=250000).
# Fleet "on" moves them with --online, fleet "off" offline. During each move, WRITERS writers
# (clients/python/itests/writer.py on the reference client: every write routed by the map, a
# refusal retried) insert orders of, and update orders they wrote for, customers of the moving
# range only. Reported per move: seconds, acknowledged writes per second during the move, the
# writes' waits from first try to acknowledgement (p50, p99, longest) during the move, and from
# the move's -v: cut-overs done, given up and deferred, and the longest one held writers.
# Afterwards every acknowledged write is checked to be on shard_2, once.
# Usage: bench/online_cutover.sh [BIN_DIR] [SCALE] [SMALL] [BIG] [WRITERS]
source "$(dirname "$0")/lib.sh" "${1:-}"
scale=${2:-600}
small=${3:-35000}
big=${4:-250000}
writers=${5:-2}
py=${SHARDCTL_CLIENT_PYTHON:-/usr/bin/python3}
writer="$here/clients/python/itests/writer.py"

echo "uptime at start: $(uptime)"
sandbox_up --no-fleet
t0=$(now)
for f in off on; do
  "$bin/shardctl" sandbox fleet "$f" --dir "$work/sb" --shards 2 --scale "$scale" --format json > "$work/$f.json"
done
echo "loaded two fleets (scale $scale) in $(r "$(now) - $t0") s"
customers=$((1000 * scale))
half=$((customers / 2 + 1))
lo_small=$((half - small))
lo_big=$((lo_small - big))

# pct FILE P: the P-th percentile of the numbers in FILE (one a line).
pct() { sort -n "$1" | awk -v p="$2" '{a[NR] = $1} END {if (NR) {i = int((NR * p + 99) / 100); if (i < 1) i = 1; print a[i]} else print "-"}'; }

# run FLEET LABEL LO HI ARGS...: the move of customers [LO, HI) with the writers on them.
run() {
  local fleet=$1 label=$2 lo=$3 hi=$4 w pid
  shift 4
  export FLEET_JSON="$work/$fleet.json" SHARDCTL_CATALOG
  SHARDCTL_CATALOG=$(jq -r .catalog "$FLEET_JSON")
  local tag="$fleet.$lo"
  runs=$((runs + 1))
  export WRITER_ORDER_BASE=$((100000000 * runs)) WRITER_CUSTOMER_BASE=$((customers * 10)) WRITER_CUSTOMERS=$((hi - 1))
  export WRITER_LO=$lo WRITER_NEW_CUSTOMERS=0 WRITER_WAITS="$work/$tag.waits"
  : >"$WRITER_WAITS"
  rm -f "$work/$tag.stop"
  local pids=()
  for ((w = 1; w <= writers; w++)); do
    PYTHONPATH="$here/clients/python" "$py" "$writer" "$w" "$work/$tag.writer.$w.log" "$work/$tag.stop" >"$work/$tag.writer.$w.sum" 2>"$work/$tag.writer.$w.err" &
    pids+=($!)
  done
  sleep 3  # the writers' steady state before the move starts
  local m0 m1 planned
  planned=$("$bin/shardctl" "$@" --dry-run --format json 2>/dev/null | jq -r '(.estimated_bytes // 0) / 1048576 | floor')
  m0=$(now)
  "$bin/shardctl" "$@" -v >"$work/$tag.out" 2>&1 || { cat "$work/$tag.out"; echo "the move failed"; }
  m1=$(now)
  sleep 1
  touch "$work/$tag.stop"
  for pid in "${pids[@]}"; do wait "$pid" || true; done
  awk -v a="$m0" -v b="$m1" '$1 >= a && $1 <= b + 0.5 {print $2}' "$WRITER_WAITS" >"$work/$tag.during"
  local n secs rate cut
  n=$(wc -l <"$work/$tag.during")
  secs=$(r "$m1 - $m0")
  rate=$(r "$n / ($m1 - $m0)")
  cut=$(grep -o 'cut-overs: .*' "$work/$tag.out" || echo "cut-overs: -")
  local refused errs
  refused=$(cat "$work/$tag".writer.*.log | awk -F'\t' '$1 == "REF"' | wc -l)
  errs=$(cat "$work/$tag".writer.*.log | awk -F'\t' '$1 == "ERR" || $1 == "AMB"' | wc -l)
  printf '| %s | %s | %s, %s MB (%s MB planned) | %s | %.0f | %s ms | %s ms | %s ms | %s | %s |\n' "$label" "$fleet" \
    "$(grep -o 'in [0-9]* batch' "$work/$tag.out" | head -1 | tr -dc 0-9)" "$(grep -o 'copy [0-9.]* s ([0-9.]* MB' "$work/$tag.out" | sed 's/.*(//; s/ MB//')" "$planned" \
    "$secs" "$rate" "$(pct "$work/$tag.during" 50)" "$(pct "$work/$tag.during" 99)" "$(pct "$work/$tag.during" 100)" \
    "$refused/$errs" "$cut"
  # Every acknowledged order of the run is on shard_2, once (the map routes the range there now).
  local dst acked found
  dst=$(jq -r '.shards[1].dsn' "$FLEET_JSON")
  acked=$(cat "$work/$tag".writer.*.log | awk -F'\t' '$1 == "ACK" && $2 == "ins_order" {print $4}' | sort -u | wc -l)
  found=$(cat "$work/$tag".writer.*.log | awk -F'\t' '$1 == "ACK" && $2 == "ins_order" {print $4}' | sort -u |
    psql -XAtq "$dst" -c "create temp table a (o bigint); copy a from stdin; select count(*) from orders o join a on o.order_id = a.o" 2>/dev/null | tail -1)
  local src_left
  src_left=$(psql -XAtq "$(jq -r '.shards[0].dsn' "$FLEET_JSON")" -c "select count(*) from orders where order_id >= $WRITER_ORDER_BASE and order_id < $((WRITER_ORDER_BASE + 100000000))")
  [ "$src_left" = 0 ] || echo "!! $fleet $label: $src_left of the run's orders are still on shard_1"
  [ "$acked" = "$found" ] || echo "!! $fleet $label: $acked orders acknowledged, $found of them on shard_2"
}

runs=0
for f in off on; do settle_fleet "$work/$f.json"; done
echo
echo "| batch | move | batches, MB copied (heap and index MB planned) | seconds | writes/s during the move | wait p50 | wait p99 | wait max | refused/errors | cut-overs (-v) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
run off "64 MB (default)" "$lo_small" "$half" split --map customers --at "$lo_small" --to shard_2
run on "64 MB (default)" "$lo_small" "$half" split --map customers --at "$lo_small" --to shard_2 --online
run off "512 MB" "$lo_big" "$lo_small" split --map customers --at "$lo_big" --to shard_2 --batch-size "$big"
run on "512 MB" "$lo_big" "$lo_small" split --map customers --at "$lo_big" --to shard_2 --batch-size "$big" --online
