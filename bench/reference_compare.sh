# Benchmark: `shardctl check --references` on a big reference table against dumping
# every copy (`COPY ... TO STDOUT | md5sum`), in one run. Four shards each hold the same
# reference table of ROWS rows (default 10M: id bigint primary key, a name, a price, a note),
# loaded in key order; then one row is changed on shard_3. Reported for each way: wall time
# (the faster of two rounds, the ways alternating, so a burst of load elsewhere on a shared
# machine does not land on one way only) and the bytes the client received from the servers
# (strace's count of recvfrom(2) on shardctl's sockets, in a further run: strace slows it; for
# the dump, the COPY streams' size), and whether the changed copy was found. Both read the four
# shards two at a time (the sandbox's two shard clusters, 2 cores). Each round also times the
# check with the row changed back (every copy identical). With BASELINE_BIN_DIR (an older build's bin
# directory), its `check --references` is timed in the same rounds too.
# Usage: bench/reference_compare.sh [BIN_DIR] [ROWS] [BASELINE_BIN_DIR]
source "$(dirname "$0")/lib.sh" "${1:-}"
rows=${2:-10000000}
baseline=${3:-}
command -v strace >/dev/null || { echo "strace is needed to count the bytes received" >&2; exit 1; }

echo "uptime at start: $(uptime)"
sandbox_up --no-fleet
"$bin/shardctl" sandbox fleet refbench --dir "$work/sb" --shards 4 --empty --format json >"$work/fleet.json"
export SHARDCTL_CATALOG
SHARDCTL_CATALOG=$(jq -r .catalog "$work/fleet.json")
mapfile -t dsns < <(jq -r '.shards[].dsn' "$work/fleet.json")
mapfile -t names < <(jq -r '.shards[].name' "$work/fleet.json")

t0=$(now)
load() {
  psql -XAtq "$1" <<SQL
CREATE TABLE big_ref (id bigint PRIMARY KEY, name text NOT NULL, price numeric(12, 2) NOT NULL, note text);
INSERT INTO big_ref SELECT g, 'item ' || g, (g % 100000) / 100.0, CASE WHEN g % 7 = 0 THEN NULL ELSE md5(g::text) END
FROM generate_series(1, $rows) g;
VACUUM (ANALYZE) big_ref;
CHECKPOINT;
SQL
}
pids=()
for i in "${!dsns[@]}"; do
  load "${dsns[i]}" &
  pids+=($!)
  # Two at a time: one per shard cluster.
  if [ ${#pids[@]} -eq 2 ]; then wait "${pids[@]}"; pids=(); fi
done
[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
for i in "${!dsns[@]}"; do "$bin/shardctl" shard add "${names[i]}" --dsn "${dsns[i]}" -q >/dev/null; done
"$bin/shardctl" table add-reference public.big_ref --source "${names[0]}" -q >/dev/null
psql -XAtqc "UPDATE big_ref SET name = 'changed' WHERE id = $((rows / 2))" "${dsns[2]}"
size=$(psql -XAtc "SELECT pg_table_size('big_ref')" "${dsns[0]}")
echo "loaded 4 copies of $rows rows ($((size / 1048576)) MB each) in $(r "$(now) - $t0") s; row $((rows / 2)) changed on ${names[2]}"
echo

# The dump: every copy streamed to the client and hashed, two shards at a time.
dump() { psql -XAtqc "COPY big_ref TO STDOUT" "$1" | tee >(md5sum >"$2.md5") | wc -c >"$2.bytes"; }
run_dump() {
  for pair in "0 1" "2 3"; do
    set -- $pair
    dump "${dsns[$1]}" "$work/dump.$1" &
    local a=$!
    dump "${dsns[$2]}" "$work/dump.$2" &
    wait "$a" $!
  done
}
# shardctl: whole-table digests on the servers, chunk digests where they differ, then the rows
# of the differing chunks only. run_check BIN JSON: exits 2 (a critical finding) when it works.
run_check() {
  local rc=0
  "$1/shardctl" check --references --parallel 2 --format json >"$2" 2>"$2.err" || rc=$?
  [ "$rc" = 2 ] || echo "note: $1 check exited $rc (2 expected: a critical finding): $(head -c 300 "$2.err")"
}
# timed NAME CMD...: runs CMD, keeping the faster time in seconds[NAME].
declare -A seconds
timed() {
  local name=$1 t0
  shift
  t0=$(now)
  "$@"
  local s
  s=$(r "$(now) - $t0")
  if [ -z "${seconds[$name]:-}" ] || [ "$(echo "$s < ${seconds[$name]}" | bc)" = 1 ]; then seconds[$name]=$s; fi
}
# change VALUE: row ROWS/2's name on shard_3 (`changed`, or back to the loaded `item N`).
change() { psql -XAtqc "UPDATE big_ref SET name = '$1' WHERE id = $((rows / 2))" "${dsns[2]}"; }
run_identical() { "$1/shardctl" check --references --parallel 2 -q >/dev/null || echo "note: $1 check exited $? on identical copies"; }
# Each round times every way, so a burst of load elsewhere hits them alike; the identical copies
# (the common case of a cron check: the whole-table digests only) with the row changed back.
for round in 1 2; do
  echo "round $round, uptime: $(uptime)"
  timed dump run_dump
  timed check run_check "$bin" "$work/check.json"
  [ -z "$baseline" ] || timed baseline run_check "$baseline" "$work/baseline.json"
  change "item $((rows / 2))"
  timed identical run_identical "$bin"
  [ -z "$baseline" ] || timed baseline_identical run_identical "$baseline"
  change changed
done
dump_bytes=$(cat "$work"/dump.*.bytes | paste -sd+ | bc)
dump_found=$( [ "$(sort -u "$work"/dump.*.md5 | wc -l)" -gt 1 ] && echo yes || echo no)
found() { jq -r '[.findings[] | select(.kind == "reference_differs")] | length > 0' "$1"; }
# bytes BIN: what shardctl's sockets received, counted under strace (which slows every system call).
bytes() {
  strace -f -qq -e trace=recvfrom -e signal=none -o "$work/strace" \
    "$1/shardctl" check --references --parallel 2 --format json >/dev/null 2>&1 || true
  awk '/recvfrom\(/ { n = $NF; if (n ~ /^[0-9]+$/) s += n } END { print s + 0 }' "$work/strace"
}
row() {  # row LABEL SECONDS BYTES FOUND
  printf '| %s | %s | %s | %s%% | %s | %s |\n' "$1" "$2" "$3" "$(r "100 * $3 / $dump_bytes")" "$(r "$2 / ${seconds[dump]}")" "$4"
}

# Bytes counted while the copies still differ.
check_bytes=$(bytes "$bin")
[ -z "$baseline" ] || baseline_bytes=$(bytes "$baseline")
echo "uptime at end: $(uptime)"
echo
echo "| way | seconds | bytes received | share of the copies' bytes | time against the dump | found the changed copy |"
echo "|---|---|---|---|---|---|"
printf '| dump (COPY \\| md5sum) | %s | %s | 100%% | 1 | %s |\n' "${seconds[dump]}" "$dump_bytes" "$dump_found"
[ -z "$baseline" ] || row "baseline check --references" "${seconds[baseline]}" "$baseline_bytes" "$(found "$work/baseline.json")"
row "shardctl check --references" "${seconds[check]}" "$check_bytes" "$(found "$work/check.json")"
echo
echo "every copy identical: check --references ${seconds[identical]} s, $(r "${seconds[identical]} / ${seconds[dump]}")x the dump" \
  "${baseline:+(baseline ${seconds[baseline_identical]} s, $(r "${seconds[baseline_identical]} / ${seconds[dump]}")x)}"
