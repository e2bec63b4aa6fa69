# rebalance apply under live traffic: one shard holds every customer (two empty shards, as if
# just added); the plan moves data to both. While the apply runs its steps batch by batch,
# writer processes (writer.sh) keep inserting orders and customers and updating their own
# orders: "routing" writers look each key up before every write and retry once after a
# refusal, a "stale" writer keeps the routes it read at its start. Afterwards every
# acknowledged write is present exactly once, on the shard the map routes it to, with its last
# acknowledged value; nothing unacknowledged was kept; pre-existing rows are unchanged;
# every refusal came from one of the apply's operations, for a key it moved, on shard_1; no
# attempt waited 5 s; and the writers raced the apply: it is held with its first batch in
# flight (SHARDCTL_FAULT_PAUSE) until writes were acknowledged and a write to that batch was
# refused meanwhile, and the stale writer runs until a fence on shard_1 refused it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/writer_harness.sh"
source "$(dirname "$0")/zoo_lib.sh"

writer_fleet rbwriter 3

# Skew: shard_1 takes every other shard's range; shards 2 and 3 are left empty (the deleted
# rows' space stays in their tables: the planner counts live bytes).
for range in $(shardctl mapping list --map customers --format json | jq -r '.mappings[] | select(.shard != "shard_1") | .range'); do
  expect_exit 0 shardctl merge --map customers --range "$range" --into shard_1
done
for n in 2 3; do
  assert_eq "$(psql_shard "$n" -XAtc "select count(*) from customers")" "0"
done
before=$(zoo_fingerprint "${old_rows[@]}")

expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan -o plan.json
steps=$(jq '.plan.steps | length' plan.json)
[ "$steps" -ge 2 ] || fail "the plan has $steps step(s), want at least 2: $(jq -c .plan.steps plan.json)"
assert_eq "$(jq '[.plan.steps[] | select(.rows > 0 and .from == "shard_1")] | length' plan.json)" "$steps"
assert_eq "$(jq '[.plan.steps[].to] | unique | sort | join(",")' plan.json)" '"shard_2,shard_3"'

# --- writers --------------------------------------------------------------------------------
start_writers 15 stale routing routing

# --- the apply, while they write ------------------------------------------------------------
# Held with its first step's first batch in flight (copied, offline on shard_1, not flipped:
# SHARDCTL_FAULT_PAUSE=journal.copied:1) until writes were acknowledged meanwhile and a write to
# that batch's keys was refused naming the operation; then let go. Small batches (40 keys), so
# the writers meet many of them.
ops_before=$(shardctl op list --format json | jq -c '[.operations[].id]')
in_flight() { cat "$TEST_TMP"/writer.*.log | grep -c "^REF.*is being moved by shardctl operation $1 to shard " || true; }
t0=$SECONDS
acks_before=$(acks)
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" rebalance apply plan.json --batch-size 40 \
  >"$TEST_TMP/apply.out" 2>"$TEST_TMP/apply.err" &
apply=$!
wait_stopped "$apply" "the apply" "$TEST_TMP/apply.err"
held_op=$(last_op)
a_held=$(acks)
raced() { [ "$(acks)" -ge $((a_held + 10)) ] && [ "$(in_flight "$held_op")" -ge 1 ]; }
wait_until "writes acknowledged, and a write to the held batch refused, while the apply is held" raced
acks_held=$(($(acks) - a_held))
kill -CONT "$apply"
# Each step's operation counts its fault points afresh (lib/fault/fault.hpp: one injector per
# operation), so every later step stops at its own first copied batch too: let each go on.
apply_ended() {
  local state
  state=$(ps -o stat= -p "$apply" | cut -c1)
  if [ "$state" = T ]; then kill -CONT "$apply"; fi
  [ -z "$state" ] || [ "$state" = Z ]
}
wait_until "the apply to end, its later steps let go at their pauses" apply_ended
wait "$apply" || fail "the apply exited $?: $(cat "$TEST_TMP/apply.out" "$TEST_TMP/apply.err")"
acks_after=$(acks)
echo "# apply of $steps steps took $((SECONDS - t0)) s; $((acks_after - acks_before)) writes acknowledged during it, $acks_held while it was held"
assert_eq "$(grep -c ' done: ' "$TEST_TMP/apply.out")" "$steps"
# The operations the apply ran (each from shard_1, as the plan said), and so the only refusals
# the writers may meet.
while IFS=$'\t' read -r id range src dst; do
  range=${range#[\[(]} range=${range%[\])]}  # "[LO,HI)", either bound may be empty
  writer_move "$id" "${range%%,*}" "${range#*,}" "$src" "$dst"
done < <(shardctl op list --format json |
         jq -r --argjson old "$ops_before" '.operations[] | select(.id as $i | $old | index($i) | not) | [.id, .range, .source, .target] | @tsv')
assert_eq "${#writer_moves[@]}" "$steps"
# The stale writer keeps writing to the shard that gave its keys away until a fence there has
# refused it, and the routing writers until they have written enough to judge by.
routing_acks() { cat "$TEST_TMP"/writer.2.log "$TEST_TMP"/writer.3.log | grep -c '^ACK' || true; }
stale_fenced() { grep -qP '^REF\t[^\t]+\t[0-9]+\t[0-9]+\tshard_1\t55000\t[^\t]*has moved to shard ' "$TEST_TMP/writer.1.log"; }
enough() { stale_fenced && [ "$(routing_acks)" -ge 20 ]; }
wait_until "the stale writer to be fenced on shard_1, and 20 writes acknowledged by routing writers" enough
stop_writers
cat "$TEST_TMP"/writer.*.log > "$TEST_TMP/all.log"
n_ack=$(grep -c '^ACK' "$TEST_TMP/all.log" || true)
n_ref=$(grep -c '^REF' "$TEST_TMP/all.log" || true)
echo "# writes: $n_ack acknowledged, $n_ref refused (55000), $(grep -c '^MISS' "$TEST_TMP/all.log" || true) updates matched nothing"

# --- no write failed for a reason the test did not expect (a refusal is one of the apply's
# operations' guards or fences on shard_1, for a key it moved); every acknowledged write exactly
# once, where the map routes it, with its last value (the verification proven able to fail
# first) ----------------------------------------------------------------------------------------
verify_writes_controlled "$TEST_TMP/all.log" 3 ins_order

# --- no write was held: an offline batch refuses writes, even while the apply stands stopped --
longest=$(longest_attempt_ms "$TEST_TMP/all.log")
echo "# longest attempt: $longest ms (claim: under 5000 ms, the apply's pause included)"
[ "$longest" -lt 5000 ] || fail "a write attempt waited $longest ms: the apply held it"

# --- pre-existing rows unchanged, and moved ---------------------------------------------------
after=$(zoo_fingerprint "${old_rows[@]}")
[ "$after" = "$before" ] || { diff <(echo "$before") <(echo "$after") >&2; fail "pre-existing rows changed"; }
for n in 2 3; do
  [ "$(psql_shard "$n" -XAtc "select count(*) from customers where customer_id <= $WRITER_CUSTOMERS")" -gt 0 ] ||
    fail "no customer moved to shard_$n"
done

# --- the writers raced the apply --------------------------------------------------------------
[ "$n_ack" -ge 60 ] || fail "only $n_ack acknowledged writes: the test did not exercise much"
[ "$acks_held" -ge 10 ] || fail "only $acks_held writes acknowledged while the apply was held"
[ "$(in_flight "$held_op")" -ge 1 ] || fail "no write to the held batch was refused"
# The stale writer sent writes for moved keys to shard_1 and was refused there by a fence.
stale_fenced || fail "the stale writer was never fenced on shard_1: $(grep -c . "$TEST_TMP/writer.1.log") writes logged"
r_ack=$(routing_acks)
[ "$r_ack" -ge 20 ] || fail "routing writers acknowledged only $r_ack writes"

# --- the fleet is consistent ----------------------------------------------------------------
zoo_assert_settled "after the apply"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.rebalance_steps where status = 'done'")" "$steps"
expect_exit 0 shardctl check
assert_fleet_consistent
pass
