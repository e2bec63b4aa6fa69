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
#                                   no write in LOG failed with anything but SQLSTATE 55000;
#                                   verify_writes can fail (a control with an acknowledged write
#                                   added, one with the first row KIND left out: each fails with
#                                   its own message); then verify_writes LOG SHARDS
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

verify_writes_controlled() {  # LOG SHARDS KIND
  local log=$1 shards=$2 kind=$3 forgotten
  if grep -q '^ERR' "$log"; then
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
