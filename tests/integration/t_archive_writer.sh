# An application keeps writing while an archive run (orders with their lines, --cascade) takes
# cold orders away: it inserts new orders, updates cold orders, and adds lines to cold orders.
# Afterwards every acknowledged write is present exactly once, on the shard or in the archive,
# with its acknowledged value; and every row that was not archived is still on its shard.
# The writes race the run, by construction rather than by timing: the run stops itself
# (SHARDCTL_FAULT_PAUSE, lib/fault/fault.hpp) in the middle of shard_1's key walk, with batch M's
# rows locked (archive-locked@shard_1/bM), and the application writes while it is held:
#  - a write to a row of batch M waits for the batch, and only for it: it returns (updating
#    nothing: the row is archived) while the run is held again right after the batch's source
#    commit (archive-committed@shard_1/bM);
#  - writes to other rows do not wait for the held batch: while it is held, updates of cold
#    orders of later batches are acknowledged (and end in the archive with their values), and
#    writes to orders of earlier batches find them gone (an update matches nothing, a new line
#    fails its foreign key): never acknowledged;
#  - afterwards, while the run goes on, no write waits longer than the longest batch of shard_1
#    (from its journaled selection to its journaled delete), plus 2 s for psql itself;
#  - a write fails only in those two ways: any other error fails the test.
source "$(dirname "$0")/lib.sh"

fresh_fleet archwriter --shards 2 --scale 2
_unique archw
psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$UNIQUE_NAME\"" >/dev/null
ARCH="$CATALOG_CLUSTER dbname=$UNIQUE_NAME"
S1=$(shard_dsn 1)
BATCH=20
CUT=$(psql -X -At "$S1" -c "select percentile_disc(0.4) within group (order by ordered_at) from orders")
WHERE="ordered_at < '$CUT'"
# The keys of every order and line, with the cold ones marked, before anything runs.
for n in 1 2; do psql_shard "$n" -XAtc "select 'o', customer_id, order_id, 0 from orders union all
                                         select 'l', customer_id, order_id, line_no from order_lines"; done | sort > "$TEST_TMP/keys.before"
# shard_1's cold orders in the order the run takes them (its root key), BATCH a batch: batch M
# is held; the writer writes to the 30 before it (archived when it is held) and the 30 after it.
psql -X -At -F ' ' "$S1" -c "select customer_id, order_id from orders where $WHERE order by customer_id, order_id" > "$TEST_TMP/cold"
batches=$((($(wc -l < "$TEST_TMP/cold") + BATCH - 1) / BATCH))
[ "$batches" -ge 6 ] || fail "only $batches batches of cold orders on shard_1"
M=$((batches / 2))
sed -n "$(((M - 1) * BATCH - 29)),$(((M - 1) * BATCH))p" "$TEST_TMP/cold" > "$TEST_TMP/done"
sed -n "$(((M - 1) * BATCH + 1)),$((M * BATCH))p" "$TEST_TMP/cold" > "$TEST_TMP/held"
sed -n "$((M * BATCH + 1)),$((M * BATCH + 30))p" "$TEST_TMP/cold" > "$TEST_TMP/later"
psql -X -At "$S1" -c "select customer_id from customers order by random() limit 30" > "$TEST_TMP/customers"
mapfile -t done_keys < "$TEST_TMP/done"
mapfile -t later_keys < "$TEST_TMP/later"
mapfile -t custs < "$TEST_TMP/customers"
cold=("${done_keys[@]}" "${later_keys[@]}")
[ "${#done_keys[@]}" = 30 ] && [ "${#later_keys[@]}" = 30 ] || fail "too few cold orders around batch $M"

PSQL=psql  # PostgreSQL's own, not pg_wrapper (lib.sh puts its bin first in PATH)
LOG="$TEST_TMP/writes.log"
STOP="$TEST_TMP/stop"
us() { echo "${EPOCHREALTIME/./}"; }
# Each write logs "OUTCOME KIND CUSTOMER ORDER VALUE START_US END_US": ACK (acknowledged), MISS (an
# update matched no row), REF (a new line's order is gone), ERR (anything else, with the error).
writer() {
  set +e  # a refused write is logged, not the end of the writer
  local i=0 out c o t0
  RANDOM=4242
  while [ ! -e "$STOP" ]; do
    i=$((i + 1))
    t0=$(us)
    case $((RANDOM % 3)) in
      0) c=${custs[$((RANDOM % ${#custs[@]}))]} o=$((900000 + i))
         out=$("$PSQL" -X -q -At "$S1" -c "insert into orders values ($c, $o, now(), 'new-$i') returning 1" 2>&1)
         if [ "$out" = 1 ]; then echo "ACK ins $c $o new-$i $t0 $(us)"; else echo "ERR ins $c $o - $t0 $(us) $out"; fi ;;
      1) read -r c o <<<"${cold[$((RANDOM % ${#cold[@]}))]}"
         out=$("$PSQL" -X -q -At "$S1" -c "update orders set status = 'w-$i' where customer_id = $c and order_id = $o returning 1" 2>&1)
         if [ "$out" = 1 ]; then echo "ACK upd $c $o w-$i $t0 $(us)"; elif [ -z "$out" ]; then echo "MISS upd $c $o - $t0 $(us)";
         else echo "ERR upd $c $o - $t0 $(us) $out"; fi ;;
      2) read -r c o <<<"${cold[$((RANDOM % ${#cold[@]}))]}"
         out=$("$PSQL" -X -q -At "$S1" -c "insert into order_lines values ($c, $o, $((500 + i)), 1, 1, 1.00) returning 1" 2>&1)
         if [ "$out" = 1 ]; then echo "ACK line $c $o $((500 + i)) $t0 $(us)";
         elif grep -q "violates foreign key" <<<"$out"; then echo "REF line $c $o - $t0 $(us)";  # the order left first
         else echo "ERR line $c $o - $t0 $(us) $out"; fi ;;
    esac >> "$LOG"
  done
}
# stopped_at PID TRACE SPEC: whether the run PID is stopped at its fault point SPEC (the last
# line of its TRACE); fails at once if it has ended.
stopped_at() {
  local st="" last
  read -r _ _ st _ 2>/dev/null < "/proc/$1/stat" || true
  [ -n "$st" ] && [ "$st" != Z ] || fail "the archive run ended before it stopped at $3: $(cat "$TEST_TMP/run.out")"
  last=$(tail -n 1 "$2")
  [ "$st" = T ] && [ "${last% *}:${last##* }" = "$3" ]
}
# held_enough: while batch M is held, the writer has had at least 3 updates of later orders
# acknowledged, and at least 3 writes to earlier orders turned away.
later_re="^ACK upd ($(sed 's/ /\\ /' "$TEST_TMP/later" | paste -sd'|')) "
done_re="^(MISS|REF) [a-z]+ ($(sed 's/ /\\ /' "$TEST_TMP/done" | paste -sd'|')) "
held_enough() {
  [ -e "$LOG" ] && [ "$(grep -cE "$later_re" "$LOG")" -ge 3 ] && [ "$(grep -cE "$done_re" "$LOG")" -ge 3 ]
}

# Neither a run stopped at a fault point nor the writer is left behind, however the test ends
# (its databases are still dropped when it passes, lib.sh).
trap 'st=$?; touch "$STOP"; [ -z "${rpid:-}" ] || kill -KILL "$rpid" 2>/dev/null; (exit $st); _drop_made_databases' EXIT

step "the run, held at batch $M of shard_1 ($batches batches)"
: > "$TEST_TMP/trace"
SHARDCTL_FAULT_TRACE="$TEST_TMP/trace" SHARDCTL_FAULT_PAUSE="archive-locked@shard_1/b$M:1,archive-committed@shard_1/b$M:1" \
  "$SHARDCTL_BIN/shardctl" archive run --table orders --where "$WHERE" --cascade --to "postgres:$ARCH" --batch-size "$BATCH" \
  --parallel 2 --sleep 50ms >"$TEST_TMP/run.out" 2>&1 &
rpid=$!
wait_until "the run to stop with batch $M locked" stopped_at "$rpid" "$TEST_TMP/trace" "archive-locked@shard_1/b$M:1"
# A write to a row of the held batch: it waits on the batch's row lock.
read -r hc ho < "$TEST_TMP/held"
(t0=$(us); out=$(PGAPPNAME=held_write "$PSQL" -X -q -At "$S1" -c "update orders set status = 'held' where customer_id = $hc
                                                                    and order_id = $ho returning 1" 2>&1)
 echo "${out:-MISS} $t0 $(us)" > "$TEST_TMP/held.out") &
hpid=$!
wait_until "the write to batch $M to wait on its lock" sql_true "$S1" \
  "select exists (select from pg_stat_activity where application_name = 'held_write' and wait_event_type = 'Lock')"
hold_from=$(us)
writer &
wpid=$!
wait_until "the writer to be answered while batch $M is held" held_enough
release_at=$(us)
kill -0 "$hpid" 2>/dev/null || fail "the write to batch $M returned while the batch was held: $(cat "$TEST_TMP/held.out")"
kill -CONT "$rpid"
# The held write returns once its batch committed, while the run is held before the next batch.
wait_until "the run to stop after batch $M's commit" stopped_at "$rpid" "$TEST_TMP/trace" "archive-committed@shard_1/b$M:1"
wait_until "the write to batch $M to return after its batch committed" eval '! kill -0 "$hpid" 2>/dev/null'
wait "$hpid"
read -r held_out held_t0 held_t1 < "$TEST_TMP/held.out"
assert_eq "$held_out" MISS  # it waited for the batch, which took its row
kill -CONT "$rpid"
got=0
wait "$rpid" || got=$?
rpid=""
[ "$got" = 0 ] || fail "the archive run exited $got: $(cat "$TEST_TMP/run.out")"
touch "$STOP"
wait "$wpid" || true
RUN=$(psql_catalog -XAtc "select op_id from shardctl.operations where kind = 'archive'")

step "the writes"
! grep -q '^ERR' "$LOG" || fail "writes failed for a reason the test does not expect: $(grep '^ERR' "$LOG" | head -3)"
# While the batch was held: the writes that started and ended inside the hold.
awk -v a="$hold_from" -v b="$release_at" '$6 >= a && $7 <= b' "$LOG" > "$TEST_TMP/during"
grep -qE "$later_re" "$TEST_TMP/during" || fail "no update of a later order was acknowledged while batch $M was held"
grep -qE "$done_re" "$TEST_TMP/during" || fail "no write to an earlier order was turned away while batch $M was held"
early_ack=$(grep -E "^ACK (upd|line) ($(sed 's/ /\\ /' "$TEST_TMP/done" | paste -sd'|')) " "$TEST_TMP/during" | head -3 || true)
[ -z "$early_ack" ] || fail "writes to orders archived before batch $M were acknowledged while it was held: $early_ack"
# The longest wait: no write waited longer than one batch of shard_1 (batch M's includes the hold).
longest_batch=$(psql_catalog -XAtc "select (extract(epoch from max(b.updated_at - b.archived_at)) * 1000000)::bigint
                                    from shardctl.archive_batches b join shardctl.shards s using (shard_id)
                                    where b.op_id = '$RUN' and s.name = 'shard_1' and b.batch_no <> $M")
read -r longest_write longest_line < <(awk '{ w = $7 - $6; if (w > m) { m = w; l = $0 } } END { print m + 0, l }' "$LOG")
echo "# writes: $(wc -l < "$LOG") ($(wc -l < "$TEST_TMP/during") while batch $M was held); held write waited $(((held_t1 - held_t0) / 1000)) ms;" \
     "longest other write $((longest_write / 1000)) ms; longest batch of shard_1 $((longest_batch / 1000)) ms"
[ "$longest_write" -le $((longest_batch + 2000000)) ] ||
  fail "a write waited $((longest_write / 1000)) ms, longer than shard_1's longest batch ($((longest_batch / 1000)) ms) + 2 s: $longest_line"

step "the rows"
# Where each order and line is now: on a shard (S) or in the archive (A).
for n in 1 2; do psql_shard "$n" -XAtc "select 'o', customer_id, order_id, 0, 'S', status from orders union all
                                         select 'l', customer_id, order_id, line_no, 'S', '' from order_lines"; done > "$TEST_TMP/now"
psql -X -At "$ARCH" -c "select 'o', customer_id, order_id, 0, 'A', status from public.orders union all
                        select 'l', customer_id, order_id, line_no, 'A', '' from public.order_lines" >> "$TEST_TMP/now"
# Exactly once: no key twice, across shards and archive.
dups=$(cut -d'|' -f1-4 "$TEST_TMP/now" | sort | uniq -d | head -3)
[ -z "$dups" ] || fail "rows present twice: $dups"
# Nothing lost: every row that existed before is somewhere.
cut -d'|' -f1-4 "$TEST_TMP/now" | sort > "$TEST_TMP/keys.now"
lost=$(comm -23 "$TEST_TMP/keys.before" "$TEST_TMP/keys.now" | head -3)
[ -z "$lost" ] || fail "rows lost: $lost"
# Every acknowledged write is there, with its value (the last acknowledged update wins).
declare -A last=()
while read -r tag kind c o v _; do
  [ "$tag" = ACK ] || continue
  case $kind in
    ins)  grep -q "^o|$c|$o|0|S|$v$" "$TEST_TMP/now" || fail "acknowledged order $c/$o is missing" ;;
    line) grep -q "^l|$c|$o|$v|" "$TEST_TMP/now" || fail "acknowledged line $c/$o/$v is missing" ;;
    upd)  last["$c|$o"]=$v ;;
  esac
done < "$LOG"
for k in "${!last[@]}"; do
  grep -q "^o|$k|0|[SA]|${last[$k]}$" "$TEST_TMP/now" || fail "order $k lost its acknowledged status ${last[$k]}: $(grep "^o|$k|" "$TEST_TMP/now")"
done
# The updates acknowledged while batch M was held reached the archive, with their values.
while read -r _ _ c o _; do
  grep -q "^o|$c|$o|0|A|" "$TEST_TMP/now" || fail "order $c/$o, updated while batch $M was held, is not in the archive"
done < <(grep -E "$later_re" "$TEST_TMP/during")
# The run archived what was cold and only that: nothing cold is left on the shards, and every
# archived order was cold.
for n in 1 2; do assert_eq "$(psql_shard "$n" -XAtc "select count(*) from orders where $WHERE")" "0"; done
assert_eq "$(psql -X -At "$ARCH" -c "select count(*) from public.orders where not ($WHERE)")" "0"
expect_exit 0 shardctl archive show "$RUN" --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
pass
