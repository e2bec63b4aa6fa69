#!/usr/bin/env bash
# Benchmark: how fast shardctl moves rows, against a DBA's hand-made pipe and the
# load limit, in one run on identical data. Two twin fleets of 2 shards get the same sample
# data (scale S: 1000*S customers with their orders and order lines, ~21,000*S rows; the
# default S=780 moves about 4.1M rows per range). Two ranges of equal size move:
#   R1 = upper half of shard_1 (shard_1 -> shard_2), R2 = lower half of shard_2 (shard_2 -> shard_1).
# Fleet "hand": R1 by the hand-made pipe (psql COPY ... TO STDOUT (FORMAT binary) | psql COPY
#   FROM STDIN per table, parents first, FK checked) plus one DELETE per table on the source,
#   children first; R2 by the limit: the same pipe in primary-key order into a target session
#   with session_replication_role = replica (FK checks skipped), copy only.
# Fleet "tool": R1 by `shardctl split` on the checked path (SHARDCTL_CHECKED_LOAD=1), R2 by
#   `shardctl split --move lower` on the fast path. Both with the default (64 MB) batches.
# So the fast path compares with the limit on the same rows (R2), the checked path with the
# hand-made pipe on the same rows (R1). Usage: bench/move_speed.sh [BIN_DIR] [SCALE]
# BENCH_PARALLEL=N passes --parallel N to shardctl (default: the config's [defaults] parallel).
source "$(dirname "$0")/lib.sh" "${1:-}"
scale=${2:-780}

echo "uptime at start: $(uptime)"
sandbox_up --no-fleet
t0=$(now)
for f in hand tool; do
  "$bin/shardctl" sandbox fleet "$f" --dir "$work/sb" --shards 2 --scale "$scale" --format json > "$work/$f.json"
done
echo "loaded two fleets (scale $scale) in $(r "$(now) - $t0") s"

s1=$(jq -r '.shards[0].dsn' "$work/hand.json")
s2=$(jq -r '.shards[1].dsn' "$work/hand.json")
customers=$((1000 * scale))
half=$((customers / 2 + 1))            # shard_1 holds [1, half), shard_2 [half, ...)
r1_lo=$((customers / 4 + 1)); r1_hi=$half
r2_lo=$half; r2_hi=$((half + customers / 4))
count_rows() {  # DSN LO HI: rows of the three tables in [LO, HI)
  psql -XAtc "select (select count(*) from customers where customer_id >= $2 and customer_id < $3)
    + (select count(*) from orders where customer_id >= $2 and customer_id < $3)
    + (select count(*) from order_lines where customer_id >= $2 and customer_id < $3)" "$1"
}
rows1=$(count_rows "$s1" $r1_lo $r1_hi)
rows2=$(count_rows "$s2" $r2_lo $r2_hi)
echo "R1 = customers [$r1_lo, $r1_hi): $rows1 rows; R2 = [$r2_lo, $r2_hi): $rows2 rows"


# Each method starts on a settled machine: every database vacuumed and analyzed, a checkpoint
# done, no autovacuum worker left. Without it, each method paid for the one before (autovacuum
# of the millions of rows it had loaded or deleted, its checkpoint), on the same two cores.
settle() {
  local dsn
  while read -r dsn; do psql -XAtqc "VACUUM (ANALYZE)" "$dsn"; done < <(jq -r '.shards[].dsn' "$work/hand.json" "$work/tool.json")
  for dsn in "$s1" "$s2"; do psql -XAtqc "CHECKPOINT" "$dsn"; done
  local i
  for i in $(seq 1 600); do
    [ "$(psql -XAtc "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'" "$s1")" = 0 ] &&
      [ "$(psql -XAtc "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'" "$s2")" = 0 ] && return
    sleep 0.2
  done
}

# Hand-made pipe + DELETE (R1), then the limit (R2), on fleet "hand".
settle
t0=$(now)
pipe "$s1" "$s2" $r1_lo $r1_hi none ""
hand_copy=$(echo "$(now) - $t0" | bc -l)
t0=$(now)
delete_customers "$s1" $r1_lo $r1_hi
hand_delete=$(echo "$(now) - $t0" | bc -l)
settle
t0=$(now)
pipe "$s2" "$s1" $r2_lo $r2_hi pk "-c session_replication_role=replica"
limit_copy=$(echo "$(now) - $t0" | bc -l)

# shardctl on fleet "tool": checked path on R1, fast path on R2.
export SHARDCTL_CATALOG=$(jq -r .catalog "$work/tool.json")
tool() {  # NAME ENV ARGS...: runs a split, keeps its -v times, peak RSS and offline windows
  local name=$1 env=$2; shift 2
  settle
  env $env /usr/bin/time -f "%e %M" -o "$work/$name.time" "$bin/shardctl" split --map customers "$@" -v ${BENCH_PARALLEL:+--parallel $BENCH_PARALLEL} \
    2> "$work/$name.err" >/dev/null || { cat "$work/$name.err" >&2; exit 1; }
  local op
  op=$("$bin/shardctl" op list --format json | jq -r '.operations[0].id')
  "$bin/shardctl" op show "$op" --format json > "$work/$name.op"
}
# Order (BENCH_ORDER=fast-first|checked-first): whichever runs second loads into a shard that
# already gave keys away, so its copy also pays the write guard's per-row trigger (fences).
if [ "${BENCH_ORDER:-fast-first}" = fast-first ]; then
  tool fast SHARDCTL_CHECKED_LOAD=0 --at $r2_hi --move lower --to shard_1
  tool checked SHARDCTL_CHECKED_LOAD=1 --at $r1_lo --to shard_2
else
  tool checked SHARDCTL_CHECKED_LOAD=1 --at $r1_lo --to shard_2
  tool fast SHARDCTL_CHECKED_LOAD=0 --at $r2_hi --move lower --to shard_1
fi
echo "order: ${BENCH_ORDER:-fast-first}"
t1=$(jq -r '.shards[0].dsn' "$work/tool.json"); t2=$(jq -r '.shards[1].dsn' "$work/tool.json")
[ "$(count_rows "$t2" $r1_lo $r1_hi)" = "$rows1" ] && [ "$(count_rows "$t1" $r2_lo $r2_hi)" = "$rows2" ] ||
  { echo "shardctl did not move every row" >&2; exit 1; }

phase() { sed -n "s/.*time: .*$2 \([0-9.]*\) s.*/\1/p" "$work/$1.err"; }
echo "uptime at end: $(uptime)"
echo
echo "| method | range, rows | total s | copy s | verify s (beside purge) | purge (delete) s | catalog s | batches | offline median / max s | peak RSS |"
echo "|---|---|---|---|---|---|---|---|---|---|"
echo "| hand-made pipe + DELETE | R1, $rows1 | $(r "$hand_copy + $hand_delete") | $(r "$hand_copy") | - | $(r "$hand_delete") | - | - | - | - |"
echo "| limit: PK-ordered pipe, FK checks skipped (copy only) | R2, $rows2 | $(r "$limit_copy") | $(r "$limit_copy") | - | - | - | - | - | - |"
for n in fast checked; do
  read -r total rss < "$work/$n.time"
  range=R2; rows=$rows2; [ $n = checked ] && { range=R1; rows=$rows1; }
  echo "| shardctl, $n path | $range, $rows | $(r "$total") | $(phase $n copy) | $(phase $n verify) ($(phase $n 'beside purge')) | $(phase $n purge) | $(phase $n catalog) | $(jq -r .batches "$work/$n.op") | $(r "$(jq -r .offline_median_seconds "$work/$n.op")") / $(r "$(jq -r .offline_max_seconds "$work/$n.op")") | $((rss / 1024)) MB |"
done
read -r fast_total _ < "$work/fast.time"
echo
echo "fast path: whole split vs hand-made pipe + DELETE: $(r "$fast_total / ($hand_copy + $hand_delete)")x (target <= 0.5)"
echo "fast path: copy vs limit: $(r "$(phase fast copy) / $limit_copy")x (target <= 1.5)"
beside=$(phase fast 'beside purge')
echo "fast path: verify vs its copy: $(r "$(phase fast verify) / $(phase fast copy)")x of reads, $(r "$beside") s of them beside a purge"
echo "fast path: time verify adds (verify - beside purge) vs its copy: $(r "($(phase fast verify) - $beside) / $(phase fast copy)")x (target <= 0.15)"
grep -h "path:\|verify:" "$work/fast.err" "$work/checked.err" | sed 's/^/  /'
