# shardctl schema drift: identical shards exit 0; drift introduced by hand with psql on one
# shard (a column, a default, an index, a trigger) exits 1 with a diff naming the shard, the
# object and both definitions, and converges once fixed; --reference, --ignore, --format json,
# --junit; an unreachable shard; a move in progress (its write guard) is not drift.
source "$(dirname "$0")/lib.sh"

fresh_fleet drift

# 1. A fresh fleet is alike.
expect_exit 0 shardctl schema drift
expect_stdout_contains "shard_1, shard_2, shard_3, shard_4: no drift"
expect_exit 0 shardctl schema drift --format json
assert_eq "$(jq -r '.drift, .differing, ([.shards[].fingerprint] | unique | length)' "$STDOUT" | tr '\n' ' ')" "false 0 1 "
[ "$(jq '.shards[0].objects' "$STDOUT")" -gt 20 ] || fail "too few objects read: $(jq -c '.shards[0]' "$STDOUT")"

# 2. A column added by hand on shard_3: extra there, with its definition.
psql_shard 3 -qc "alter table orders add column note text not null default 'n/a'"
expect_exit 1 shardctl schema drift
expect_stdout_contains "shard_3: 1 difference(s) from the majority of 4 shard(s)"
expect_stdout_contains "extra     column:public.orders.note"
expect_stdout_contains "shard_3:  text NOT NULL DEFAULT 'n/a'::text"
expect_stdout_contains "shard_1, shard_2, shard_4: no drift"
expect_stdout_contains "drift: 1 of 4 shard(s) differ"
# --reference shard_3: now the other three miss it.
expect_exit 1 shardctl schema drift --reference shard_3 --format json
assert_eq "$(jq -r '[.shards[] | select(.differences != []) | .shard + ":" + .differences[0].change + ":" + .differences[0].object] | join(" ")' "$STDOUT")" \
  "shard_1:missing:column:public.orders.note shard_2:missing:column:public.orders.note shard_4:missing:column:public.orders.note"
assert_eq "$(jq -r '.basis, .reference' "$STDOUT" | tr '\n' ' ')" "reference shard_3 "
expect_exit 64 shardctl schema drift --reference nosuch
# --ignore by name glob, by kind:name glob.
expect_exit 0 shardctl schema drift --ignore 'public.orders.no*'
expect_exit 0 shardctl schema drift --ignore 'column:*.note'
expect_exit 1 shardctl schema drift --ignore 'index:*'
expect_exit 0 shardctl schema drift --ignore 'index:*' --ignore 'column:*.note'
# --shards leaving shard_3 out: alike.
expect_exit 0 shardctl schema drift --shards shard_1,shard_2,shard_4
psql_shard 3 -qc "alter table orders drop column note"
expect_exit 0 shardctl schema drift

# 3. A default changed by hand on shard_2: different, both definitions shown.
col=$(psql_shard 2 -XAtc "select attname from pg_attribute where attrelid = 'customers'::regclass and attnum > 0
                          and not attisdropped and format_type(atttypid, atttypmod) = 'text' order by attnum limit 1")
[ -n "$col" ] || fail "no text column in customers"
want=$(psql_shard 2 -XAtc "select format_type(atttypid, atttypmod) || case when attnotnull then ' NOT NULL' else '' end
                           from pg_attribute where attrelid = 'customers'::regclass and attname = '$col'")
psql_shard 2 -qc "alter table customers alter column $col set default 'hand-made'"
expect_exit 1 shardctl schema drift --format json
assert_eq "$(jq -r '.shards[] | select(.shard == "shard_2") | .differences[] | [.change, .object, .expected, .actual] | join("|")' "$STDOUT")" \
  "different|column:public.customers.$col|$want|$want DEFAULT 'hand-made'::text"
assert_eq "$(jq -r '[.shards[] | select(.shard != "shard_2") | .status] | unique | join(",")' "$STDOUT")" "ok"
expect_exit 1 shardctl schema drift
expect_stdout_contains "different column:public.customers.$col"
expect_stdout_contains "majority: $want"
expect_stdout_contains "shard_2:  $want DEFAULT 'hand-made'::text"
psql_shard 2 -qc "alter table customers alter column $col drop default"
expect_exit 0 shardctl schema drift

# 4. An index created by hand on shard_4; and --junit: one test case per shard.
psql_shard 4 -qc "create index orders_by_hand on orders (order_id, customer_id)"
expect_exit 1 shardctl schema drift --junit "$TEST_TMP/drift.xml"
expect_stdout_contains "extra     index:public.orders_by_hand"
expect_stdout_contains "CREATE INDEX orders_by_hand ON public.orders USING btree (order_id, customer_id)"
assert_eq "$(grep -c '<testcase ' "$TEST_TMP/drift.xml")" 4
assert_eq "$(grep -c '<failure ' "$TEST_TMP/drift.xml")" 1
grep -q 'name="shard_4"' "$TEST_TMP/drift.xml" || fail "no test case for shard_4: $(cat "$TEST_TMP/drift.xml")"
grep -A3 'name="shard_4"' "$TEST_TMP/drift.xml" | grep -q "<failure" || fail "shard_4's case did not fail: $(cat "$TEST_TMP/drift.xml")"
expect_exit 0 shardctl schema drift --ignore 'index:*_by_hand'
psql_shard 4 -qc "drop index orders_by_hand"
expect_exit 0 shardctl schema drift --junit "$TEST_TMP/drift.xml"
assert_eq "$(grep -c '<failure ' "$TEST_TMP/drift.xml" || true)" 0

# 5. A trigger every shard has, dropped by hand on shard_1: missing there, definition shown.
for i in 1 2 3 4; do
  psql_shard "$i" -q <<'SQL'
create function touch_order() returns trigger language plpgsql as $$ begin return new; end $$;
create trigger orders_touch before update on orders for each row execute function touch_order();
SQL
done
expect_exit 0 shardctl schema drift
psql_shard 1 -qc "drop trigger orders_touch on orders"
expect_exit 1 shardctl schema drift
expect_stdout_contains "shard_1: 1 difference(s)"
expect_stdout_contains "missing   trigger:public.orders.orders_touch"
expect_stdout_contains "majority: CREATE TRIGGER orders_touch BEFORE UPDATE ON public.orders FOR EACH ROW EXECUTE FUNCTION public.touch_order()"
# A function body changed by hand is drift too.
psql_shard 1 -qc "create trigger orders_touch before update on orders for each row execute function touch_order()"
psql_shard 2 -qc 'create or replace function touch_order() returns trigger language plpgsql as $$ begin new.order_id := new.order_id; return new; end $$'
expect_exit 1 shardctl schema drift --format json
assert_eq "$(jq -r '.shards[] | select(.differences != []) | .shard + " " + .differences[0].object' "$STDOUT")" "shard_2 function:public.touch_order()"
psql_shard 2 -qc 'create or replace function touch_order() returns trigger language plpgsql as $$ begin return new; end $$'
expect_exit 0 shardctl schema drift

# 6. An unreachable shard: 3 when the others agree, 1 when they do not (a difference is a
# definite answer); listed either way, and a failed JUnit case.
mkdir -p "$TEST_TMP/nosock"
expect_exit 0 shardctl shard add ghost --dsn "host=$TEST_TMP/nosock port=1 dbname=ghost"
expect_exit 3 shardctl schema drift --junit "$TEST_TMP/drift.xml" --connect-timeout 2
expect_stdout_contains "ghost: unreachable: cannot connect to shard ghost"
grep -A3 'name="ghost"' "$TEST_TMP/drift.xml" | grep -q "<failure" || fail "ghost's case did not fail"
psql_shard 3 -qc "alter table orders add column note text"
expect_exit 1 shardctl schema drift --format json
assert_eq "$(jq -r '[.shards[] | .shard + ":" + .status] | join(" ")' "$STDOUT")" \
  "ghost:unreachable shard_1:ok shard_2:ok shard_3:drift shard_4:ok"
expect_exit 3 shardctl schema drift --reference ghost
expect_stdout_contains "not compared: the reference shard ghost could not be read"
psql_shard 3 -qc "alter table orders drop column note"
expect_exit 0 shardctl shard remove ghost
expect_exit 0 shardctl schema drift

# 8. CHECK constraints are compared by their stored expression; shards where it differs are
# deparsed and compared again. A function whose oid differs by creation order is no drift;
# a changed CHECK is, shown readably on both sides.
psql_shard 1 -qc "create function pad() returns int language sql as 'select 1'"
for i in 1 2 3 4; do
  psql_shard "$i" -qc "create function positive(integer) returns bool language sql immutable as 'select \$1 >= 0'"
  psql_shard "$i" -qc "alter table orders add constraint orders_positive check (positive(order_id))"
done
psql_shard 1 -qc "drop function pad()"
# shard_1 and shard_2 live on different clusters, whose oid counters other tests also move: should
# they still meet, shard_1 makes its function again, further on.
same_oid() { [ "$(psql_shard 1 -XAtc "select 'positive(integer)'::regprocedure::oid")" = "$(psql_shard 2 -XAtc "select 'positive(integer)'::regprocedure::oid")" ]; }
for _ in 1 2 3; do
  same_oid || break
  psql_shard 1 -qc "alter table orders drop constraint orders_positive" -c "drop function positive(integer)" \
    -c "create function pad() returns int language sql as 'select 1'" \
    -c "create function positive(integer) returns bool language sql immutable as 'select \$1 >= 0'" \
    -c "alter table orders add constraint orders_positive check (positive(order_id))" -c "drop function pad()"
done
same_oid && fail "the function got the same oid on shard_1 and shard_2: the test proves nothing"
expect_exit 0 shardctl schema drift
psql_shard 3 -qc "alter table orders drop constraint orders_positive"
psql_shard 3 -qc "alter table orders add constraint orders_positive check (positive(order_id + 1))"
expect_exit 1 shardctl schema drift
expect_stdout_contains "shard_3: 1 difference(s)"
expect_stdout_contains "different constraint:public.orders.orders_positive"
expect_stdout_contains "majority: CHECK (public.positive(order_id))"
expect_stdout_contains "shard_3:  CHECK (public.positive((order_id + 1)))"
for i in 1 2 3 4; do psql_shard "$i" -qc "alter table orders drop constraint orders_positive; drop function positive(integer)"; done
expect_exit 0 shardctl schema drift

# 9. A split paused mid-copy has its write guard (triggers, shardctl schema) on the shards:
# that is shardctl's own, not drift.
SHARDCTL_FAULT_PAUSE=journal.done:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 200 --to shard_3 \
  --batch-size 10 >"$TEST_TMP/split.out" 2>&1 &
split=$!
trap 'kill -CONT $split 2>/dev/null || true' EXIT
wait_stopped $split "the split" "$TEST_TMP/split.out"
guards=0
for i in 1 2 3 4; do guards=$((guards + $(psql_shard "$i" -XAtc "select count(*) from pg_trigger where tgname like 'shardctl_guard%'"))); done
[ "$guards" -gt 0 ] || fail "the paused split installed no guard trigger"
expect_exit 0 shardctl schema drift
kill -CONT $split
wait $split || fail "the split failed: $(cat "$TEST_TMP/split.out")"
trap - EXIT
expect_exit 0 shardctl schema drift

# 10. A catalog with no shard registered says so, instead of printing nothing.
fresh_database drift_empty
expect_exit 0 shardctl init
expect_exit 0 shardctl schema drift
expect_stdout_contains "nothing to compare: no shard is registered"
pass
