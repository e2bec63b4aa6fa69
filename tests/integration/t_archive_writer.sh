# An application keeps writing while an archive run (orders with their lines, --cascade) takes
# cold orders away: it inserts new orders, updates cold orders, and adds lines to cold orders.
# Afterwards every acknowledged write is present exactly once, on the shard or in the archive,
# with its acknowledged value; and every row that was not archived is still on its shard.
source "$(dirname "$0")/lib.sh"

fresh_fleet archwriter --shards 2 --scale 2
_unique archw
psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$UNIQUE_NAME\"" >/dev/null
ARCH="$CATALOG_CLUSTER dbname=$UNIQUE_NAME"
S1=$(shard_dsn 1)
CUT=$(psql -X -At "$S1" -c "select percentile_disc(0.4) within group (order by ordered_at) from orders")
WHERE="ordered_at < '$CUT'"
# The keys of every order and line, with the cold ones marked, before anything runs.
for n in 1 2; do psql_shard "$n" -XAtc "select 'o', customer_id, order_id, 0 from orders union all
                                         select 'l', customer_id, order_id, line_no from order_lines"; done | sort > "$TEST_TMP/keys.before"
# Cold orders from the middle of the key walk: written to both before and after their batch.
psql -X -At "$S1" -c "select customer_id || ' ' || order_id from orders where $WHERE order by customer_id, order_id
                      offset (select count(*) / 2 from orders where $WHERE) limit 60" > "$TEST_TMP/cold"
psql -X -At "$S1" -c "select customer_id from customers order by random() limit 30" > "$TEST_TMP/customers"
mapfile -t cold < "$TEST_TMP/cold"
mapfile -t custs < "$TEST_TMP/customers"

PSQL=psql  # PostgreSQL's own, not pg_wrapper (lib.sh puts its bin first in PATH)
LOG="$TEST_TMP/writes.log"
STOP="$TEST_TMP/stop"
writer() {
  set +e  # a refused write is logged, not the end of the writer
  local i=0 out c o
  RANDOM=4242
  while [ ! -e "$STOP" ]; do
    i=$((i + 1))
    case $((RANDOM % 3)) in
      0) c=${custs[$((RANDOM % ${#custs[@]}))]}
         out=$("$PSQL" -X -q -At "$S1" -c "insert into orders values ($c, $((900000 + i)), now(), 'new-$i') returning 1" 2>&1) &&
           echo "ACK ins $c $((900000 + i)) new-$i" >> "$LOG" || echo "ERR ins $c $out" >> "$LOG" ;;
      1) read -r c o <<<"${cold[$((RANDOM % ${#cold[@]}))]}"
         out=$("$PSQL" -X -q -At "$S1" -c "update orders set status = 'w-$i' where customer_id = $c and order_id = $o returning 1" 2>&1)
         if [ "$out" = 1 ]; then echo "ACK upd $c $o w-$i" >> "$LOG"; elif [ -z "$out" ]; then echo "MISS upd $c $o" >> "$LOG";
         else echo "ERR upd $c $o $out" >> "$LOG"; fi ;;
      2) read -r c o <<<"${cold[$((RANDOM % ${#cold[@]}))]}"
         out=$("$PSQL" -X -q -At "$S1" -c "insert into order_lines values ($c, $o, $((500 + i)), 1, 1, 1.00) returning 1" 2>&1)
         if [ "$out" = 1 ]; then echo "ACK line $c $o $((500 + i))" >> "$LOG";
         elif grep -q "violates foreign key" <<<"$out"; then echo "REF line $c $o" >> "$LOG";  # the order left first
         else echo "ERR line $c $o $out" >> "$LOG"; fi ;;
    esac
  done
}
writer &
wpid=$!
sleep 1
expect_exit 0 shardctl archive run --table orders --where "$WHERE" --cascade --to "postgres:$ARCH" --batch-size 20 --parallel 2 --sleep 50ms
# Writes after the run: updates find nothing, new lines lose their order.
sleep 2
touch "$STOP"
wait "$wpid" || true
RUN=$(psql_catalog -XAtc "select op_id from shardctl.operations where kind = 'archive'")
! grep -q '^ERR' "$LOG" || fail "writer errors: $(grep '^ERR' "$LOG" | head -3)"
[ "$(grep -c '^ACK' "$LOG")" -ge 20 ] || fail "the writer acknowledged too few writes: $(wc -l < "$LOG")"
[ "$(grep -c '^ACK upd' "$LOG")" -ge 3 ] || fail "too few acknowledged updates of cold orders"

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
while read -r tag kind c o v; do
  [ "$tag" = ACK ] || continue
  case $kind in
    ins)  grep -q "^o|$c|$o|0|S|$v$" "$TEST_TMP/now" || fail "acknowledged order $c/$o is missing" ;;
    line) grep -q "^l|$c|$o|$v|" "$TEST_TMP/now" || fail "acknowledged line $c/$o/$v is missing" ;;
    upd)  last["$c|$o"]=$v ;;
  esac
done < "$LOG"
# The writes raced the run: some landed on cold rows before their batch (the archive holds
# them), some came after (refused, or updating nothing).
grep -qE '^(MISS|REF)' "$LOG" || fail "no write came after its row was archived: the test did not race the run"
raced=0
for k in "${!last[@]}"; do grep -q "^o|$k|0|A|${last[$k]}$" "$TEST_TMP/now" && raced=1; done
[ "$raced" = 1 ] || fail "no acknowledged update of a cold order reached the archive"
for k in "${!last[@]}"; do
  grep -q "^o|$k|0|[SA]|${last[$k]}$" "$TEST_TMP/now" || fail "order $k lost its acknowledged status ${last[$k]}: $(grep "^o|$k|" "$TEST_TMP/now")"
done
# The run archived what was cold and only that: nothing cold is left on the shards, and every
# archived order was cold.
for n in 1 2; do assert_eq "$(psql_shard "$n" -XAtc "select count(*) from orders where $WHERE")" "0"; done
assert_eq "$(psql -X -At "$ARCH" -c "select count(*) from public.orders where not ($WHERE)")" "0"
expect_exit 0 shardctl archive show "$RUN" --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
pass
