#!/usr/bin/env bash
# Benchmark: an online move under a steady writer against the offline move of the
# same rows. Two twin fleets of 2 shards get the same sample data (scale S: 1000*S customers
# with their orders and order lines; the default S=780 moves about 4.1M rows). On each, the
# upper half of shard_1's mapping, R = [customers/4 + 1, customers/2 + 1), moves to shard_2:
#   fleet "off": `shardctl split` (offline batches: writes to a batch's keys fail meanwhile);
#   fleet "on":  `shardctl split --online` (writes wait at each batch's cut-over).
# During each, two writers (tests/integration/writer.sh, routing mode: a lookup before every
# write, one retry after a refusal) insert and update orders of random customers, a quarter of
# them in R. Reported: the move's wall time; the writes' waits from first try to acknowledgement
# (lookups included: the same for both) as p50, p99 and longest; writes refused twice (not
# acknowledged); online, the slot's apply lag and the WAL the source retained for it, sampled
# every 0.5 s (peak and median; then their peaks per 5 s of the move, over time). Usage: bench/online_move.sh [BIN_DIR] [SCALE]
source "$(dirname "$0")/lib.sh" "${1:-}"
scale=${2:-780}
writer="$here/tests/integration/writer.sh"

echo "uptime at start: $(uptime)"
sandbox_up --no-fleet
t0=$(now)
for f in off on; do
  "$bin/shardctl" sandbox fleet "$f" --dir "$work/sb" --shards 2 --scale "$scale" --format json > "$work/$f.json"
done
echo "loaded two fleets (scale $scale) in $(r "$(now) - $t0") s"
customers=$((1000 * scale))
half=$((customers / 2 + 1))
lo=$((customers / 4 + 1))

# run FLEET ARGS...: the split with two writers; prints one result line.
run() {
  local fleet=$1 pid w
  shift
  export SHARDCTL_CATALOG FLEET_JSON="$work/$fleet.json"
  SHARDCTL_CATALOG=$(jq -r .catalog "$FLEET_JSON")
  export SHARDCTL_BIN="$bin" WRITER_ORDER_BASE=100000000 WRITER_CUSTOMER_BASE=$((customers * 10)) WRITER_CUSTOMERS=$customers
  export WRITER_WAITS="$work/$fleet.waits"
  : >"$WRITER_WAITS"
  rm -f "$work/$fleet.stop"
  local src
  src=$(jq -r '.shards[0].dsn' "$FLEET_JSON")
  : >"$work/$fleet.lag"
  # Lag and WAL retained by shardctl's slot on the source, every 0.5 s.
  (while [ ! -e "$work/$fleet.stop" ]; do
     psql -XAtc "select extract(epoch from clock_timestamp())::numeric(16, 2),
                        coalesce(max(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)), 0)::bigint,
                        coalesce(max(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)), 0)::bigint
                 from pg_replication_slots where slot_name like 'shardctl_op_%'" "$src" >>"$work/$fleet.lag" 2>/dev/null
     sleep 0.5
   done) &
  local sampler=$!
  local pids=()
  for w in 1 2; do
    bash "$writer" routing "$w" "$work/$fleet.writer.$w.log" "$work/$fleet.stop" 2>"$work/$fleet.writer.$w.err" &
    pids+=($!)
  done
  sleep 2  # the writers' steady state before the move starts
  t0=$(now)
  "$bin/shardctl" "$@" -q >/dev/null
  local secs
  secs=$(r "$(now) - $t0")
  sleep 1
  touch "$work/$fleet.stop"
  for pid in "${pids[@]}" "$sampler"; do wait "$pid" || true; done
  local n p50 p99 max refused errs lagmax lagmed walmax
  n=$(wc -l <"$WRITER_WAITS")
  p50=$(sort -n "$WRITER_WAITS" | sed -n "$(((n + 1) / 2))p")
  p99=$(sort -n "$WRITER_WAITS" | sed -n "$(((n * 99 + 99) / 100))p")
  max=$(sort -n "$WRITER_WAITS" | tail -1)
  # A write refused on both tries (the writer gives it up) was never acknowledged.
  refused=$(cat "$work/$fleet".writer.*.log | awk -F'\t' '$1 == "REF"' | wc -l)
  errs=$(cat "$work/$fleet".writer.*.log | awk -F'\t' '$1 == "ERR"' | wc -l)
  lagmax=$(awk -F'|' '{print $2}' "$work/$fleet.lag" | sort -n | tail -1)
  lagmed=$(awk -F'|' '$2 > 0 {print $2}' "$work/$fleet.lag" | sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : 0)}')
  walmax=$(awk -F'|' '{print $3}' "$work/$fleet.lag" | sort -n | tail -1)
  # Over time: per 5 s from the move's start, the peak apply lag and WAL retained.
  awk -F'|' -v t0="$t0" '{ b = int(($1 - t0) / 5); if (b < 0) next; if ($2 > lag[b]) lag[b] = $2; if ($3 > wal[b]) wal[b] = $3; if (b > last) last = b }
    END { for (i = 0; i <= last; i++) printf "%s+%ds %d kB / %d MB", (i ? ", " : ""), 5 * i, lag[i] / 1024, wal[i] / 1048576; print "" }' \
    "$work/$fleet.lag" >"$work/$fleet.series"
  printf '| %s | %s | %s | %s ms | %s ms | %s ms | %s | %s | %s kB | %s kB | %s MB |\n' "$fleet" "$secs" "$n" "$p50" "$p99" "$max" \
    "$refused" "$errs" "$((${lagmed:-0} / 1024))" "$((${lagmax:-0} / 1024))" "$((${walmax:-0} / 1048576))"
}

rows=$(psql -XAtc "select (select count(*) from customers where customer_id >= $lo and customer_id < $half)
  + (select count(*) from orders where customer_id >= $lo and customer_id < $half)
  + (select count(*) from order_lines where customer_id >= $lo and customer_id < $half)" "$(jq -r '.shards[0].dsn' "$work/on.json")")
echo "R = customers [$lo, $half): $rows rows move from shard_1 to shard_2"
echo
echo "| move | seconds | writes acked | wait p50 | wait p99 | wait max | refusals | errors | lag median | lag peak | WAL retained peak |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
settle_fleet "$work/off.json"
run off split --map customers --at "$lo" --to shard_2
settle_fleet "$work/on.json"
run on split --map customers --at "$lo" --to shard_2 --online
echo
echo "online, per 5 s from the move's start, peak apply lag / WAL the slot retained:"
cat "$work/on.series"
