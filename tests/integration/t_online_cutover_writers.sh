# An online move's cut-over under writers that write the moving keys hard, with default
# options: two Python writers on the reference client (clients/python/itests/writer.py:
# Router.run, the map version stated per transaction, refusals retried) insert orders of
# customers 251..500, the mapping that moves, and update orders they wrote, while
# `move --key 300 --to shard_4 --online` moves it as one batch. Fails when:
#   - a cut-over gave up (the move's -v count) or the move failed;
#   - any write acknowledged during the move waited past 500 ms from its first try to its
#     acknowledgement, retries after refusals included;
#   - a write failed for a reason the test did not expect: anything but a refusal of the move
#     on shard_2, retried (writer_harness.sh, unexpected_failures), or a replication object of
#     the move is left on a shard (zoo_lib.sh, zoo_assert_no_streams);
#   - the writers did not race the move: the move, held after its copy (online.copied), saw
#     fewer than 50 writes to its keys acknowledged on shard_2 meanwhile; none
#     refused shardctl_moving (held at the cut-over, then refused and retried on shard_4), none
#     acknowledged on shard_4 during the move, or under 200 writes a second during it;
#   - an acknowledged write is lost, duplicated, misplaced or not its last value
#     (writer_harness.sh, with its two controls that must fail).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/writer_harness.sh"
source "$(dirname "$0")/zoo_lib.sh"
source "$(dirname "$0")/client_lib.sh"

bar_ms=500
writer_fleet cutw 4
assert_eq "$(zoo_mappings customers)" "..251>shard_1 251..501>shard_2 501..751>shard_3 751..>shard_4"
before=$(zoo_fingerprint "${old_rows[@]}")

step "writers on customers 251..500"
rm -f "$stopfile"
export WRITER_WAITS="$TEST_TMP/waits"
: >"$WRITER_WAITS"
for w in 1 2; do
  : >"$TEST_TMP/writer.$w.log"
  # Only the keys that move (WRITER_CUSTOMERS stays the harness's bound of the sample's ids).
  WRITER_LO=251 WRITER_CUSTOMERS=500 WRITER_NEW_CUSTOMERS=0 client_py "$CLIENT_DIR/itests/writer.py" $w "$TEST_TMP/writer.$w.log" "$stopfile" >"$TEST_TMP/writer.$w.sum" 2>"$TEST_TMP/writer.$w.err" &
  pids+=($!)
done
trap 's=$?; touch "$stopfile"; (exit $s); _drop_made_databases' EXIT
writer_acks() { grep -c '^ACK' "$TEST_TMP/writer.$1.log" || true; }
started() { [ "$(writer_acks 1)" -ge 100 ] && [ "$(writer_acks 2)" -ge 100 ]; }
wait_until "both writers to acknowledge 100 writes" started

step "move --online with default options"
# Held after its copy (online.copied: the slot's snapshot taken, the keys still served by
# shard_2) until 50 more writes to the moving keys were acknowledged there: they reach shard_4
# only through the stream the cut-over then catches up.
acked_on_source() { cat "$TEST_TMP"/writer.*.log | grep -c $'^ACK\t[a-z_]*\t[0-9]*\t[0-9]*\tshard_2\t' || true; }
t0=$EPOCHREALTIME
SHARDCTL_FAULT_PAUSE=online.copied:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 300 --to shard_4 --online -v \
  >"$TEST_TMP/move.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the move after its copy" "$TEST_TMP/move.out"
op=$(last_op)
n_held=$(acked_on_source)
held() { [ "$(acked_on_source)" -ge $((n_held + 50)) ]; }
wait_until "50 writes to the moving keys acknowledged on shard_2 while the move is held" held
kill -CONT "$pid"
wait "$pid" || fail "the move exited $?: $(cat "$TEST_TMP/move.out")"
t1=$EPOCHREALTIME
# The writers go on until each has been acknowledged on shard_4, where the map now routes them.
on_target() { local w; for w in 1 2; do grep -q $'^ACK\t[a-z_]*\t[0-9]*\t[0-9]*\tshard_4\t' "$TEST_TMP/writer.$w.log" || return 1; done; }
wait_until "both writers to be acknowledged on shard_4" on_target
stop_writers
writer_move "$op" 251 501 shard_2 shard_4
cut=$(grep -o 'cut-overs: .*' "$TEST_TMP/move.out") || fail "the move's -v output has no cut-over count: $(cat "$TEST_TMP/move.out")"
echo "# $cut"
[[ "$cut" == *"given up 0,"* ]] || fail "a cut-over gave up under steady writes: $cut; $(grep 'last cut-over given up' "$TEST_TMP/move.out")"
assert_eq "$(zoo_mappings customers)" "..251>shard_1 251..501>shard_4 501..751>shard_3 751..>shard_4"

step "waits"
awk -v a="$t0" -v b="$t1" '$1 >= a && $1 <= b {print $2}' "$WRITER_WAITS" | sort -n >"$TEST_TMP/during"
n=$(wc -l <"$TEST_TMP/during")
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
rate=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%d", n / s }')
p99=$(awk '{a[NR] = $1} END {i = int((NR * 99 + 99) / 100); print a[i < 1 ? 1 : i]}' "$TEST_TMP/during")
max=$(tail -1 "$TEST_TMP/during")
echo "# the move took $secs s; $n writes acknowledged during it ($rate/s); their waits: p99 $p99 ms, longest $max ms (bar $bar_ms ms)"
[ "$rate" -ge 200 ] || fail "only $rate writes a second during the move: the writers did not write hard"
awk -v m="$max" -v bar="$bar_ms" 'BEGIN { exit !(m <= bar) }' || fail "a write waited $max ms, past the $bar_ms ms bar"

step "raced"
cat "$TEST_TMP"/writer.*.log > "$TEST_TMP/all.log"
moving=$(grep -c $'\tshardctl_moving$' "$TEST_TMP/all.log" || true)
echo "# $moving writes refused shardctl_moving and retried"
[ "$moving" -ge 1 ] || fail "no write met the cut-over (none refused shardctl_moving): the race did not happen"
grep -q $'^ACK\tins_order\t[0-9]*\t[0-9]*\tshard_2\t' "$TEST_TMP/all.log" || fail "no write acknowledged on the source"
grep -q $'^ACK\tins_order\t[0-9]*\t[0-9]*\tshard_4\t' "$TEST_TMP/all.log" || fail "no write acknowledged on the target"

step "verify"
# No write failed but by a refusal of the move on shard_2 (writer_harness.sh): none given up,
# none unclassified, none ambiguous, no error.
verify_writes_controlled "$TEST_TMP/all.log" 4 ins_order
zoo_assert_no_streams "after the move"
after=$(zoo_fingerprint "${old_rows[@]}")
[ "$after" = "$before" ] || { diff <(echo "$before") <(echo "$after") >&2; fail "pre-existing rows changed"; }
zoo_assert_settled "after the move"
expect_exit 0 shardctl check
pass
