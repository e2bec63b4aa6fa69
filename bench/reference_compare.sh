#!/usr/bin/env bash
# Benchmark (issue 31): `shardctl check --references` on a big reference table against dumping
# every copy (`COPY ... TO STDOUT | md5sum`), in one run. Four shards each hold the same
# reference table of ROWS rows (default 10M: id bigint primary key, a name, a price, a note),
# loaded in key order; then one row is changed on shard_3. Reported for each way: wall time
# and the bytes the client received from the servers (strace's count of recvfrom(2) on
# shardctl's sockets, in a second run: strace slows it; for the dump, the COPY streams' size),
# and whether the changed copy was found. Both read the four shards two at a time (the sandbox's two shard clusters, 2 cores).
# Usage: bench/reference_compare.sh [BIN_DIR] [ROWS]
source "$(dirname "$0")/lib.sh" "${1:-}"
rows=${2:-10000000}
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
t0=$(now)
for pair in "0 1" "2 3"; do
  set -- $pair
  dump "${dsns[$1]}" "$work/dump.$1" &
  a=$!
  dump "${dsns[$2]}" "$work/dump.$2" &
  wait "$a" $!
done
dump_s=$(r "$(now) - $t0")
dump_bytes=$(cat "$work"/dump.*.bytes | paste -sd+ | bc)
dump_found=$( [ "$(sort -u "$work"/dump.*.md5 | wc -l)" -gt 1 ] && echo yes || echo no)

# shardctl: chunk digests on the servers, then the rows of the differing chunks only. Timed
# alone; then run again under strace to count the bytes (strace slows every system call).
t0=$(now)
rc=0
"$bin/shardctl" check --references --parallel 2 --format json >"$work/check.json" 2>"$work/check.err" || rc=$?
check_s=$(r "$(now) - $t0")
[ "$rc" = 2 ] || echo "note: check exited $rc (2 expected: a critical finding): $(head -c 300 "$work/check.err")"
check_found=$(jq -r '[.findings[] | select(.kind == "reference_differs")] | length > 0' "$work/check.json")
strace -f -qq -e trace=recvfrom -e signal=none -o "$work/strace" \
  "$bin/shardctl" check --references --parallel 2 --format json >/dev/null 2>&1 || true
check_bytes=$(awk '/recvfrom\(/ { n = $NF; if (n ~ /^[0-9]+$/) s += n } END { print s + 0 }' "$work/strace")

echo "| way | seconds | bytes received | share of the copies' bytes | found the changed copy |"
echo "|---|---|---|---|---|"
printf '| dump (COPY \\| md5sum) | %s | %s | 100%% | %s |\n' "$dump_s" "$dump_bytes" "$dump_found"
printf '| shardctl check --references | %s | %s | %s%% | %s |\n' "$check_s" "$check_bytes" \
  "$(r "100 * $check_bytes / $dump_bytes")" "$check_found"
echo
echo "time ratio (check / dump): $(r "$check_s / $dump_s")"
