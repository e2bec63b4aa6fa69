# The harness of the live-writer tests (t_live_writers.sh, t_online_writers.sh,
# t_rebalance_writer.sh), sourced after lib.sh and zoo_lib.sh. Uses WRITER_CUSTOMERS and
# WRITER_ORDER_BASE (writer.sh's key spaces).
#   writer_fleet NAME SHARDS        a sample fleet of SHARDS shards (scale 1, ZOO_SHARDS set),
#                                   the writers' key spaces exported above every sample key
#                                   (checked), and old_rows: the sample rows the writers never
#                                   touch, as zoo_fingerprint specs
#   start_writers MIN_ACKS MODE...  one writer.sh per MODE (stale|routing), numbered from 1,
#                                   logging to $TEST_TMP/writer.N.log; returns once MIN_ACKS
#                                   writes are acknowledged
#   acks                            acknowledged writes so far
#   stop_writers                    stops them; fails if one failed
#   forget_first_write LOG KIND     LOG without any acknowledgement of the first row KIND
#                                   (ins_order or ins_customer) acknowledged: its insert and
#                                   every update of it (a negative control's input)
#   verify_writes LOG SHARDS        every acknowledged write in LOG is present exactly once,
#                                   with the value of its last acknowledged write, on the shard
#                                   the map routes its key to (shards 1..SHARDS); no refused
#                                   insert is present; nothing else is
#   verify_writes_controlled LOG SHARDS KIND
#                                   no write in LOG failed for a reason the test did not expect
#                                   (expect_only_move_failures, when the test declared its moves
#                                   with writer_move; else: nothing but SQLSTATE 55000);
#                                   verify_writes can fail (a control with an acknowledged write
#                                   added, one with the first row KIND left out: each fails with
#                                   its own message); then verify_writes LOG SHARDS
#   writer_move OP LO HI SOURCE TARGET
#                                   declares that operation OP moves keys LO <= k < HI (an empty
#                                   LO or HI: unbounded) from SOURCE to TARGET while the writers run
#   unexpected_failures LOG         the lines of LOG recording a failure no declared move explains
#   expect_only_move_failures LOG   fails, listing them, unless there is none; proves first that
#                                   it can fail (a refusal naming no declared move must be listed)
#   hold_start / hold_end           brackets a time the test holds an operation stopped (kept in
#                                   writer_holds as "START END", $EPOCHREALTIME)
#   longest_attempt_ms LOG...       the longest time a writer.sh attempt took from sending its
#                                   statement to its answer, less the part of it that fell within
#                                   the test's holds: what shardctl made it wait
WRITER="$(dirname "${BASH_SOURCE[0]}")/writer.sh"
stopfile="$TEST_TMP/stop"
pids=()

writer_fleet() {
  fresh_fleet "$1" --shards "$2" --scale 1
  ZOO_SHARDS=$2
  export WRITER_ORDER_BASE=1000000 WRITER_CUSTOMER_BASE=10000 WRITER_CUSTOMERS=1000
  local i max_order
  max_order=$(for ((i = 1; i <= $2; i++)); do psql_shard "$i" -XAtc "select coalesce(max(order_id), 0) from orders"; done |
    sort -n | tail -1)
  [ "$max_order" -lt "$WRITER_ORDER_BASE" ] || fail "sample orders reach $max_order"
  old_rows=("customers|x.customer_id <= $WRITER_CUSTOMERS" "orders|x.order_id < $WRITER_ORDER_BASE" order_lines region product)
}

start_writers() {
  local min=$1 w=0 mode
  shift
  rm -f "$stopfile"
  for mode in "$@"; do
    w=$((w + 1))
    : >"$TEST_TMP/writer.$w.log"
    bash "$WRITER" "$mode" "$w" "$TEST_TMP/writer.$w.log" "$stopfile" 2>"$TEST_TMP/writer.$w.err" &
    pids+=($!)
  done
  trap 'touch "$stopfile"' EXIT
  for _ in $(seq 1 100); do [ "$(acks)" -ge "$min" ] && break; sleep 0.2; done
  [ "$(acks)" -ge "$min" ] || fail "writers are not writing: $(cat "$TEST_TMP"/writer.*.err "$TEST_TMP"/writer.*.log | head -5)"
}

acks() { cat "$TEST_TMP"/writer.*.log | grep -c '^ACK' || true; }

stop_writers() {
  touch "$stopfile"
  local p
  for p in "${pids[@]}"; do wait "$p" || fail "writer $p exited $?: $(cat "$TEST_TMP"/writer.*.err)"; done
  pids=()
}

forget_first_write() {  # LOG KIND
  # All of the row's ACK lines go: an acknowledged update alone would still explain the row.
  awk -F'\t' -v kind="$2" '
    $1 == "ACK" && key == "" && $2 == kind { key = $3 "\t" $4 }
    { lines[NR] = $0; k[NR] = ($1 == "ACK") ? $3 "\t" $4 : "" }
    END { for (i = 1; i <= NR; i++) if (k[i] != key || key == "") print lines[i] }' "$1"
}

verify_writes() {  # LOG SHARDS
  local log=$1 shards=$2 i dups missing extra leaked wrong
  # Expected: per row (kind, cid, oid) the value of its last acknowledged write (one writer
  # per row, sequential, so log order is commit order).
  awk -F'\t' '$1 == "ACK" { k = ($2 == "ins_customer" ? "C" : "O") "\t" $3 "\t" $4; v[k] = $6 }
              END { for (k in v) print k "\t" v[k] }' "$log" | LC_ALL=C sort > "$TEST_TMP/expected"
  # Found: every new row on every shard.
  : > "$TEST_TMP/found_with_shard"
  for ((i = 1; i <= shards; i++)); do
    psql_shard "$i" -XAt -F $'\t' -c "
      select 'C', customer_id, 0, name, '$(shard_name "$i")' from customers where customer_id > $WRITER_CUSTOMERS
      union all
      select 'O', customer_id, order_id, status, '$(shard_name "$i")' from orders where order_id >= $WRITER_ORDER_BASE" \
      >> "$TEST_TMP/found_with_shard" || fail "query failed on shard $i"
  done
  cut -f1-4 "$TEST_TMP/found_with_shard" | LC_ALL=C sort > "$TEST_TMP/found"
  dups=$(cut -f1-3 "$TEST_TMP/found" | uniq -d | head -3)
  [ -z "$dups" ] || fail "rows present more than once across the fleet: $(echo "$dups" | tr '\n\t' '; ')"
  missing=$(LC_ALL=C comm -23 "$TEST_TMP/expected" "$TEST_TMP/found" | head -5)
  [ -z "$missing" ] || fail "acknowledged writes missing or with another value ($(LC_ALL=C comm -23 "$TEST_TMP/expected" "$TEST_TMP/found" | wc -l) rows; kind cid oid value): $(echo "$missing" | tr '\n\t' '; ')"
  extra=$(LC_ALL=C comm -13 "$TEST_TMP/expected" "$TEST_TMP/found" | head -5)
  [ -z "$extra" ] || fail "rows present that no acknowledged write explains ($(LC_ALL=C comm -13 "$TEST_TMP/expected" "$TEST_TMP/found" | wc -l)): $(echo "$extra" | tr '\n\t' '; ')"
  # Refused inserts are absent (implied by the above; said plainly).
  awk -F'\t' '$1 == "REF" && $2 != "upd_order" { print ($2 == "ins_customer" ? "C" : "O") "\t" $3 "\t" $4 }' "$log" |
    LC_ALL=C sort > "$TEST_TMP/refused"
  leaked=$(LC_ALL=C comm -12 "$TEST_TMP/refused" <(cut -f1-3 "$TEST_TMP/found") | head -3)
  [ -z "$leaked" ] || fail "refused writes are present: $(echo "$leaked" | tr '\n\t' '; ')"
  # Each on the shard the map routes its key to.
  cut -f2 "$TEST_TMP/found_with_shard" | "$SHARDCTL_BIN/shardctl" lookup --map customers - | cut -f2 > "$TEST_TMP/routed"
  wrong=$(paste <(cut -f1-3,5 "$TEST_TMP/found_with_shard") "$TEST_TMP/routed" | awk -F'\t' '$4 != $5' | head -3)
  [ -z "$wrong" ] || fail "new rows on a shard the map does not route them to (kind cid oid on routed): $(echo "$wrong" | tr '\n\t' '; ')"
}

writer_moves=()
writer_move() { writer_moves+=("$1 ${2:--} ${3:--} $4 $5"); }

# The rules (writer.sh's log format, and writer.py's and routing_writer.sh's):
#   ACK                       never a failure
#   REF, SQLSTATE 55000       writer.sh: refused by a declared OP's guard on its SOURCE for a key of
#                             its range: "is being moved by shardctl operation OP to shard TARGET;"
#                             (a batch in flight, or a cut-over's) or "has moved to shard TARGET
#                             (shardctl operation OP)" (its fence); sql/guard.sql, refuse_range
#   RET                       writer.py: a refusal Router.run retried, classified by constraint:
#                             shardctl_moving or shardctl_fenced on OP's SOURCE for a key of its
#                             range; shardctl_stale_route on any OP's SOURCE (its route floor refuses
#                             an older map version, whatever the key)
#   MISS                      an update that matched no row: on OP's SOURCE for a key of its range
#                             (the row left with the purge while the update waited for its lock)
#   UNC                       only with WRITER_ALLOW_UNC=1 (a fleet whose guards predate the
#                             contract's constraint names)
#   anything else             ERR, AMB, REF of writer.py (given up): unexpected
unexpected_failures() {  # LOG
  local moves
  moves=$(printf '%s;' "${writer_moves[@]}")
  awk -F'\t' -v moves="$moves" -v allow_unc="${WRITER_ALLOW_UNC:-0}" '
    BEGIN { n = split(moves, m, ";"); k = 0
            for (i = 1; i <= n; i++) if (m[i] != "") { split(m[i], f, " "); k++; op[k] = f[1]; lo[k] = f[2]; hi[k] = f[3]; src[k] = f[4]; dst[k] = f[5] } }
    function covers(i, key) { return (lo[i] == "-" || key + 0 >= lo[i] + 0) && (hi[i] == "-" || key + 0 < hi[i] + 0) }
    function ok() {
      if ($1 == "ACK") return 1
      if ($1 == "UNC") return allow_unc == 1
      for (i = 1; i <= k; i++) {
        if ($5 != src[i]) continue
        if ($1 == "RET" && $6 == "shardctl_stale_route") return 1
        if (!covers(i, $3)) continue
        if ($1 == "MISS") return 1
        if ($1 == "RET" && ($6 == "shardctl_moving" || $6 == "shardctl_fenced")) return 1
        if ($1 == "REF" && $6 == "55000" &&
            (index($7, "is being moved by shardctl operation " op[i] " to shard " dst[i] ";") ||
             index($7, "has moved to shard " dst[i] " (shardctl operation " op[i] ")"))) return 1
      }
      return 0
    }
    !ok() { print }' "$1"
}

expect_only_move_failures() {  # LOG
  local log=$1 bad src
  if [ -z "${_move_failures_proven:-}" ]; then
    _move_failures_proven=1
    read -r _ _ _ src _ <<<"${writer_moves[0]}"
    # A refusal naming an operation the test never ran, on a declared source: must be listed.
    printf 'REF\tins_order\t7\t1999998\t%s\t55000\tkey 7 of public.orders is being moved by shardctl operation 00000000-0000-0000-0000-000000000000 to shard shard_9; writes to it are refused until its batch is done\t1\t2\n' \
      "$src" > "$TEST_TMP/control_unexpected.log"
    must_fail "a refusal no declared move explains" \
      "1 write(s) failed for a reason no operation of the test explains: REF ins_order 7 1999998" \
      expect_only_move_failures "$TEST_TMP/control_unexpected.log"
  fi
  bad=$(unexpected_failures "$log")
  [ -z "$bad" ] || {
    head -5 <<<"$bad" >&2
    fail "$(wc -l <<<"$bad") write(s) failed for a reason no operation of the test explains: $(head -1 <<<"$bad" | cut -f1-4 | tr '\t' ' ')"
  }
}

writer_holds=()
hold_start() { _hold_t0=$EPOCHREALTIME; }
hold_end() { writer_holds+=("$_hold_t0 $EPOCHREALTIME"); }

longest_attempt_ms() {  # LOG...
  local holds
  holds=$(printf '%s;' "${writer_holds[@]}")
  cat "$@" | awk -F'\t' -v holds="$holds" '
    BEGIN { n = split(holds, h, ";") }
    NF >= 8 && $(NF - 1) ~ /^[0-9]+\.[0-9]+$/ && $NF ~ /^[0-9]+\.[0-9]+$/ {
      a = $(NF - 1); b = $NF; d = b - a
      for (i = 1; i <= n; i++) if (h[i] != "") {
        split(h[i], t, " "); lo = (a > t[1]) ? a : t[1]; hi = (b < t[2]) ? b : t[2]
        if (hi > lo) d -= hi - lo
      }
      if (d > max) max = d
    }
    END { printf "%d\n", max * 1000 }'
}

verify_writes_controlled() {  # LOG SHARDS KIND
  local log=$1 shards=$2 kind=$3 forgotten
  if [ "${#writer_moves[@]}" -gt 0 ]; then
    expect_only_move_failures "$log"
  elif grep -q '^ERR' "$log"; then
    grep '^ERR' "$log" | cut -f2- | sort | uniq -c | sort -rn | head -5 >&2
    fail "$(grep -c '^ERR' "$log") write(s) failed with something other than SQLSTATE 55000 (above)"
  fi
  { cat "$log"; printf 'ACK\tins_order\t7\t1999999\tshard_1\tw9\n'; } > "$TEST_TMP/control1.log"
  must_fail "acknowledged write missing" \
    "acknowledged writes missing or with another value (1 rows; kind cid oid value): O 7 1999999 w9;" \
    verify_writes "$TEST_TMP/control1.log" "$shards"
  forget_first_write "$log" "$kind" > "$TEST_TMP/control2.log"
  # The row left out, with the value of its last acknowledged write (updates change it).
  forgotten=$(awk -F'\t' -v kind="$kind" '
    $1 == "ACK" && key == "" && $2 == kind { key = $3 "\t" $4 }
    $1 == "ACK" && key != "" && $3 "\t" $4 == key { row = (kind == "ins_customer" ? "C" : "O") " " $3 " " $4 " " $6 ";" }
    END { print row }' "$log")
  [ -n "$forgotten" ] || fail "no $kind was acknowledged: the second control has nothing to leave out"
  must_fail "row that no acknowledged write explains" "rows present that no acknowledged write explains (1): $forgotten" \
    verify_writes "$TEST_TMP/control2.log" "$shards"
  verify_writes "$log" "$shards"
}
