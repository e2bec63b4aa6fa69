# Moves under live traffic: while a split, a merge and a move run batch by batch,
# writer processes (writer.sh) keep inserting orders and customers and updating their own
# orders. "stale" writers write to the shard they routed each key to at their start;
# "routing" writers look the key up before every write and retry once after a refusal.
# Afterwards: every acknowledged write is present exactly once, on the shard the map routes it
# to, with its last acknowledged value; nothing unacknowledged was kept; pre-existing rows are
# unchanged; refusals were SQLSTATE 55000 only; stale writers were stopped by fences naming the
# new shard. Runs the same on the release and the ASan build (SHARDCTL_BIN).
# The writes provably raced each operation, as t_rebalance_writer.sh and t_archive_writer.sh
# require of theirs: each operation is held once with its first batch in flight (copied,
# offline on its source, not yet flipped: SHARDCTL_FAULT_PAUSE=journal.copied:1) until writes
# were acknowledged meanwhile and writes to that batch's keys were refused naming the operation
# and its target (shardctl-split(1): "is being moved by shardctl operation ... to shard ...");
# and the writers run on until every operation's fence has refused a stale write. Each is
# counted and required, waited for on the writers' logs, never on the clock.
# No write failed for a reason the test did not expect: every refusal is one of the three
# operations' guards or fences on its source, for a key it moved, naming it and its target;
# every update that matched nothing was sent to such a source (writer_harness.sh,
# unexpected_failures). An offline batch refuses writes, it never holds them: every attempt,
# those made while an operation stood stopped included, was answered within 5 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/writer_harness.sh"
source "$(dirname "$0")/zoo_lib.sh"

writer_fleet live 4
assert_eq "$(psql_catalog -XAtc "select 1")" "1"
assert_eq "$(zoo_mappings customers)" "..251>shard_1 251..501>shard_2 501..751>shard_3 751..>shard_4"
before=$(zoo_fingerprint "${old_rows[@]}")

# --- writers --------------------------------------------------------------------------------
start_writers 20 stale stale routing routing

# --- split, merge, move while they write ----------------------------------------------------
# in_flight OP: writes refused because OP's batch was in flight ("being moved by ... OP").
in_flight() { cat "$TEST_TMP"/writer.*.log | grep -c "^REF.*is being moved by shardctl operation $1 to shard " || true; }
# fenced OP: stale writes refused by a fence OP left ("... (shardctl operation OP)").
fenced() { cat "$TEST_TMP"/writer.1.log "$TEST_TMP"/writer.2.log | grep -c "^REF.*has moved to shard .* (shardctl operation $1)" || true; }
raced() {  # raced OP ACKS: writes acknowledged since ACKS, and writes refused by OP in flight
  [ "$(acks)" -ge $(($2 + 10)) ] && [ "$(in_flight "$1")" -ge 1 ]
}
ops=() targets=() summary=()
# live_op NAME TARGET ARGS...: runs `shardctl ARGS` (whose target is TARGET), held at its first
# batch in flight until raced.
live_op() {
  local name=$1 target=$2 pid op a0 a1
  shift 2
  a0=$(acks)
  SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" "$@" >"$TEST_TMP/$name.out" 2>&1 &
  pid=$!
  wait_stopped "$pid" "the $name" "$TEST_TMP/$name.out"
  op=$(last_op)
  a1=$(acks)
  wait_until "$name: writes acknowledged, and writes to its first batch refused, while that batch is in flight" raced "$op" "$a1"
  kill -CONT "$pid"
  wait "$pid" || fail "$name: exited $?: $(cat "$TEST_TMP/$name.out")"
  ops+=("$op") targets+=("$target")
  summary+=("$name: $(($(acks) - a0)) writes acknowledged while it ran, $(in_flight "$op") refused in flight")
}
live_op split shard_1 split --map customers --at 875 --to shard_1 --batch-size 20
writer_move "${ops[0]}" 875 "" shard_4 shard_1
live_op merge shard_3 merge --map customers --range 501.. --into shard_3 --batch-size 20
writer_move "${ops[1]}" 751 875 shard_4 shard_3
writer_move "${ops[1]}" 875 "" shard_1 shard_3
live_op move shard_4 move --map customers --key 300 --to shard_4 --batch-size 20
writer_move "${ops[2]}" 251 501 shard_2 shard_4
assert_eq "$(zoo_mappings customers)" "..251>shard_1 251..501>shard_4 501..>shard_3"
# The stale writers keep writing to the shards that gave their keys away until each operation's
# fence has refused them, and the routing writers until they have written enough to judge by.
routing_acks() { cat "$TEST_TMP"/writer.3.log "$TEST_TMP"/writer.4.log | grep -c '^ACK' || true; }
enough() {
  local op
  for op in "${ops[@]}"; do [ "$(fenced "$op")" -ge 1 ] || return 1; done
  [ "$(acks)" -ge 100 ] && [ "$(routing_acks)" -ge 20 ]
}
wait_until "every operation's fence to refuse a stale write, 100 writes acknowledged, 20 by routing writers" enough
stop_writers
cat "$TEST_TMP"/writer.*.log > "$TEST_TMP/all.log"
echo "# writes: $(grep -c '^ACK' "$TEST_TMP/all.log") acknowledged, $(grep -c '^REF' "$TEST_TMP/all.log") refused (55000)," \
  "$(grep -c '^MISS' "$TEST_TMP/all.log") updates matched nothing, $(grep -c '^ERR' "$TEST_TMP/all.log") errors"
for i in 0 1 2; do echo "# ${summary[$i]}, $(fenced "${ops[$i]}") stale writes fenced"; done

# --- no write failed for a reason the test did not expect; every acknowledged write exactly
# once, where the map routes it, with its last value (the verification proven able to fail
# first) ----------------------------------------------------------------------------------------
verify_writes_controlled "$TEST_TMP/all.log" 4 ins_customer

# --- no write was held: the longest attempt, from its statement to its answer ----------------
longest=$(longest_attempt_ms "$TEST_TMP/all.log")
echo "# longest attempt: $longest ms (claim: under 5000 ms, the operations' pauses included)"
[ "$longest" -lt 5000 ] || fail "a write attempt waited $longest ms: an offline move held it"

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
# Refusals of a batch in flight name its operation's target.
for i in 0 1 2; do
  wrong=$(grep -h "^REF.*is being moved by shardctl operation ${ops[$i]} to shard " "$TEST_TMP"/writer.*.log |
          grep -v "is being moved by shardctl operation ${ops[$i]} to shard ${targets[$i]};" | head -3 | cut -f3,5,7 || true)
  [ -z "$wrong" ] || fail "in-flight refusals of the operation to ${targets[$i]} naming another shard (key, written to, message): $(echo "$wrong" | tr '\n\t' '; ')"
done
# Routing writers got through: their acknowledged writes outnumber their final refusals.
r_ack=$(routing_acks)
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
