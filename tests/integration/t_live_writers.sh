# Moves under live traffic (issue 8): while a split, a merge and a move run batch by batch,
# writer processes (writer.sh) keep inserting orders and customers and updating their own
# orders. "stale" writers write to the shard they routed each key to at their start;
# "routing" writers look the key up before every write and retry once after a refusal.
# Afterwards: every acknowledged write is present exactly once, on the shard the map routes it
# to, with its last acknowledged value; nothing unacknowledged was kept; pre-existing rows are
# unchanged; refusals were SQLSTATE 55000 only; stale writers were stopped by fences naming the
# new shard. Runs the same on the release and the ASan build (SHARDCTL_BIN).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/writer_harness.sh"
source "$(dirname "$0")/zoo_lib.sh"

fresh_fleet live --shards 4 --scale 1
ZOO_SHARDS=4
export WRITER_ORDER_BASE=1000000 WRITER_CUSTOMER_BASE=10000 WRITER_CUSTOMERS=1000
assert_eq "$(psql_catalog -XAtc "select 1")" "1"
max_order=$(for i in 1 2 3 4; do psql_shard "$i" -XAtc "select coalesce(max(order_id), 0) from orders"; done | sort -n | tail -1)
[ "$max_order" -lt "$WRITER_ORDER_BASE" ] || fail "sample orders reach $max_order"
assert_eq "$(zoo_mappings customers)" "..251>shard_1 251..501>shard_2 501..751>shard_3 751..>shard_4"
old_rows=("customers|x.customer_id <= $WRITER_CUSTOMERS" "orders|x.order_id < $WRITER_ORDER_BASE" order_lines region product)
before=$(zoo_fingerprint "${old_rows[@]}")

# --- writers --------------------------------------------------------------------------------
start_writers 20 stale stale routing routing

# --- split, merge, move while they write ----------------------------------------------------
t0=$SECONDS
expect_exit 0 shardctl split --map customers --at 875 --to shard_1 --batch-size 20
acks_split=$(acks)
expect_exit 0 shardctl merge --map customers --range 501.. --into shard_3 --batch-size 20
expect_exit 0 shardctl move --map customers --key 300 --to shard_4 --batch-size 20
echo "# operations took $((SECONDS - t0)) s"
assert_eq "$(zoo_mappings customers)" "..251>shard_1 251..501>shard_4 501..>shard_3"
# Stale writers keep writing to the shards that gave their keys away for a moment longer.
sleep 2
stop_writers
cat "$TEST_TMP"/writer.*.log > "$TEST_TMP/all.log"
echo "# writes: $(grep -c '^ACK' "$TEST_TMP/all.log") acknowledged, $(grep -c '^REF' "$TEST_TMP/all.log") refused (55000)," \
  "$(grep -c '^MISS' "$TEST_TMP/all.log") updates matched nothing, $(grep -c '^ERR' "$TEST_TMP/all.log") errors;" \
  "$acks_split acknowledged by the end of the split"

# --- no write failed with anything but 55000 ------------------------------------------------
if grep -q '^ERR' "$TEST_TMP/all.log"; then
  grep '^ERR' "$TEST_TMP/all.log" | cut -f2- | sort | uniq -c | sort -rn | head -5 >&2
  fail "$(grep -c '^ERR' "$TEST_TMP/all.log") write(s) failed with something other than SQLSTATE 55000 (above)"
fi

# --- every acknowledged write exactly once, where the map routes it, with its last value ----
# The verification can fail: a write acknowledged but absent, a row no acknowledged write explains.
{ cat "$TEST_TMP/all.log"; printf 'ACK\tins_order\t7\t1999999\tshard_1\tw9\n'; } > "$TEST_TMP/control1.log"
must_fail "acknowledged write missing" verify_writes "$TEST_TMP/control1.log" 4
forget_first_write "$TEST_TMP/all.log" ins_customer > "$TEST_TMP/control2.log"
must_fail "row that no acknowledged write explains" verify_writes "$TEST_TMP/control2.log" 4
verify_writes "$TEST_TMP/all.log" 4

# --- pre-existing rows unchanged ------------------------------------------------------------
after=$(zoo_fingerprint "${old_rows[@]}")
[ "$after" = "$before" ] || { diff <(echo "$before") <(echo "$after") >&2; fail "pre-existing rows changed"; }

# --- refusals: some, all 55000, and stale writes fenced with the new shard named -----------
n_ack=$(grep -c '^ACK' "$TEST_TMP/all.log" || true)
n_ref=$(grep -c '^REF' "$TEST_TMP/all.log" || true)
[ "$n_ack" -ge 100 ] || fail "only $n_ack acknowledged writes: the test did not exercise much"
[ "$n_ref" -ge 1 ] || fail "no write was refused (55000) although keys moved under the writers"
# Fence refusals: a stale writer's write to a shard that gave the key away, refused with a
# message naming the shard the key moved to ("moved to shard X"; a batch in flight says "being
# moved ... to shard X"). The name must be the operation's target for that key and source:
# 875.. left shard_4 for shard_1 (split), 751..875 left shard_4 for shard_3 (merge), 251..501
# left shard_2 for shard_4 (move); new customers (> 1000) lie in 875...
awk -F'\t' '$1 == "REF" && $7 ~ /moved to shard / && $7 !~ /being moved/ {
              match($7, /moved to shard [^ ;,()]+/); named = substr($7, RSTART + 15, RLENGTH - 15)
              k = $3 + 0; want = "?"
              if ($5 == "shard_4" && k >= 875) want = "shard_1"
              else if ($5 == "shard_4" && k >= 751) want = "shard_3"
              else if ($5 == "shard_2" && k >= 251 && k < 501) want = "shard_4"
              print (named == want ? "ok" : "bad") "\t" $3 "\t" $5 "\t" named "\t" want }' \
  "$TEST_TMP"/writer.1.log "$TEST_TMP"/writer.2.log > "$TEST_TMP/fenced"
fenced=$(grep -c '^ok' "$TEST_TMP/fenced" || true)
if grep -q '^bad' "$TEST_TMP/fenced"; then
  fail "fence refusals naming the wrong shard (key, written to, named, want): $(grep '^bad' "$TEST_TMP/fenced" | head -3 | cut -f2- | tr '\n\t' '; ')"
fi
[ "$fenced" -ge 1 ] || {
  grep -h '^REF' "$TEST_TMP"/writer.1.log "$TEST_TMP"/writer.2.log | cut -f7 | sed 's/[0-9a-f-]\{36\}/ID/g; s/[0-9]\+/N/g' | sort | uniq -c >&2
  fail "no stale write was refused by a fence naming the new shard (refusal messages above)"
}
# Routing writers got through: their acknowledged writes outnumber their final refusals.
r_ack=$(cat "$TEST_TMP"/writer.3.log "$TEST_TMP"/writer.4.log | grep -c '^ACK' || true)
[ "$r_ack" -ge 20 ] || fail "routing writers acknowledged only $r_ack writes"
echo "# $n_ack acknowledged, $n_ref refused, $fenced stale writes fenced"

# --- the fleet is consistent; lifting the fences leaves no guard behind ---------------------
zoo_assert_settled "after the writers"
expect_exit 0 shardctl check
for op in $(shardctl op list --format json | jq -r '.operations[].id'); do
  expect_exit 0 shardctl op unfence "$op"
done
assert_fleet_consistent
expect_exit 0 shardctl check
pass
