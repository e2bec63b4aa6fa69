# Declared xrefs are children for archive when they live on their parent's shard: order_note has
# no foreign key to orders, but an xref routed by its own shard key (n_custkey on map cust).
# Without --cascade an order that notes reference stays (counted as refused, in the dry run and
# the run); with --cascade its notes go to the archive with it, and restore brings both back.
# An xref whose children may be on other shards (order_audit, sharded on another map) is named in
# a warning. `check --orphans` finds no orphan after any of it (it would delete them for good).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet archxref
zoo_all_shards <<'SQL'
create table customers (c_custkey int primary key);
create table orders (o_custkey int not null references customers, o_orderkey bigint not null, o_date date not null,
                     primary key (o_custkey, o_orderkey));
create table order_note (n_custkey int not null, n_orderkey bigint not null, note text not null,
                         primary key (n_custkey, n_orderkey, note));
create table order_audit (audit_id int primary key, a_custkey int not null, a_orderkey bigint not null);
SQL
shardctl map create cust --kind range --key-type int >/dev/null
shardctl mapping add --map cust --range ..101 --shard shard_1 >/dev/null
shardctl mapping add --map cust --range 101.. --shard shard_2 >/dev/null
shardctl map create audit --kind range --key-type int >/dev/null
shardctl mapping add --map audit --range ..1001 --shard shard_1 >/dev/null
shardctl mapping add --map audit --range 1001.. --shard shard_2 >/dev/null
zoo_sharded customers cust c_custkey
zoo_sharded orders cust o_custkey
zoo_sharded order_note cust n_custkey
zoo_sharded order_audit audit audit_id
expect_exit 0 shardctl xref add notes --child "order_note(n_custkey, n_orderkey)" --parent "orders(o_custkey, o_orderkey)" \
  --route n_custkey --map cust
expect_exit 0 shardctl xref add audit --child "order_audit(a_custkey, a_orderkey)" --parent "orders(o_custkey, o_orderkey)" \
  --route a_custkey --map cust
for n in 1 2; do
  cond="<= 100"; [ "$n" = 2 ] && cond="> 100"
  psql_shard "$n" -q -1 <<SQL
insert into customers select c from generate_series(1, 200) c where c $cond;
insert into orders select k % 200 + 1, k, date '2024-01-01' + (k % 60)::int from generate_series(1, 1000) k
  where k % 200 + 1 $cond;
insert into order_note select o_custkey, o_orderkey, 'note ' || i from orders, generate_series(1, 2) i where o_orderkey % 7 = 0;
SQL
done
WHERE="o_date < '2024-01-31'"
sum() { echo $(( $(psql_shard 1 -XAtc "$1") + $(psql_shard 2 -XAtc "$1") )); }
fp() {
  for n in 1 2; do psql_shard "$n" -XAtc "
    select 'o', count(*), md5(string_agg(x::text, ',' order by x::text)) from orders x union all
    select 'n', count(*), md5(string_agg(x::text, ',' order by x::text)) from order_note x"; done
}
before=$(fp)
cold=$(sum "select count(*) from orders where $WHERE")
noted=$(sum "select count(*) from orders where $WHERE and o_orderkey % 7 = 0")
cold_notes=$(sum "select count(*) from order_note n join orders o on (o_custkey, o_orderkey) = (n_custkey, n_orderkey) where $WHERE")
notes=$(sum "select count(*) from order_note")
[ "$noted" -gt 0 ] && [ "$noted" -lt "$cold" ] || fail "the data has no cold orders with and without notes"
expect_exit 0 shardctl check --orphans
AUDIT_WARNING="warning: rows of public.order_audit that reference archived rows of public.orders through xref audit may be on other shards; this run leaves them"

# --- without --cascade: an order with notes stays, and the run says how many ------------------
expect_exit 0 shardctl archive run --table orders --where "$WHERE" --to "dir:$TEST_TMP/a" --dry-run --format json
assert_eq "$(jq '[.shards[].refused] | add' "$STDOUT")" "$noted"
assert_eq "$(jq '[.shards[].rows["public.orders"]] | add' "$STDOUT")" "$(( cold - noted ))"
expect_stderr_contains "$AUDIT_WARNING"
assert_eq "$(fp)" "$before"
expect_exit 0 shardctl archive run --table orders --where "$WHERE" --to "dir:$TEST_TMP/a" --format json
RUN1=$(jq -r .id "$STDOUT")
assert_eq "$(jq '[.shards[].refused] | add' "$STDOUT")" "$noted"
assert_eq "$(jq '[.shards[].rows["public.orders"]] | add' "$STDOUT")" "$(( cold - noted ))"
expect_stderr_contains "$AUDIT_WARNING"
expect_stderr_contains "row(s) of public.orders stayed because rows still reference them"
assert_eq "$(sum 'select count(*) from order_note')" "$notes"
assert_eq "$(sum "select count(*) from orders where $WHERE")" "$noted"
expect_exit 0 shardctl check --orphans

# --- with --cascade: the notes go along (through the xref, journaled as such) ------------------
expect_exit 0 shardctl archive run --table orders --where "$WHERE" --cascade --to "dir:$TEST_TMP/b" --name with-notes --format json
RUN2=$(jq -r .id "$STDOUT")
assert_eq "$(jq '[.shards[].rows["public.orders"]] | add' "$STDOUT")" "$noted"
assert_eq "$(jq '[.shards[].rows["public.order_note"]] | add' "$STDOUT")" "$cold_notes"
assert_eq "$(psql_catalog -XAtc "select args -> 'tables' -> 1 ->> 'xref' from shardctl.operations where op_id = '$RUN2'")" "notes"
assert_eq "$(sum "select count(*) from orders where $WHERE")" "0"
assert_eq "$(sum 'select count(*) from order_note')" "$(( notes - cold_notes ))"
expect_exit 0 shardctl check --orphans

# --- restore --where is checked like a run's predicate: refused before anything changes ---------
archived=$(fp; cat "$TEST_TMP/b"/*/manifest.json | md5sum)
expect_exit 64 shardctl archive restore "$RUN2" --where "o_orderkey < 0) or (true"
expect_stderr_contains "error: the archive predicate is refused at character 15: ')' closes a parenthesis the predicate did not open"
expect_exit 64 shardctl archive restore "$RUN2" --where "random() < 0.5" --dry-run
expect_stderr_contains "error: the archive predicate calls volatile function random()"
assert_eq "$(fp; cat "$TEST_TMP/b"/*/manifest.json | md5sum)" "$archived"

# --- restore brings every row back, notes included ---------------------------------------------
expect_exit 0 shardctl archive restore "$RUN2"
expect_exit 0 shardctl archive restore "$RUN1"
assert_eq "$(fp)" "$before"
expect_exit 0 shardctl check --orphans

# --- an xref that --cascade cannot follow is refused before anything changes -------------------
expect_exit 0 shardctl xref add self --child "order_note(n_custkey, n_orderkey)" --parent "order_note(n_custkey, n_orderkey)" \
  --route n_custkey --map cust
expect_exit 64 shardctl archive run --table order_note --where "true" --cascade --to "dir:$TEST_TMP/c"
expect_stderr_contains "error: --cascade cannot follow xref self of public.order_note: it references its own table"
assert_eq "$(fp)" "$before"
[ ! -e "$TEST_TMP/c" ] || [ -z "$(find "$TEST_TMP/c" -type f)" ] || fail "a refused run wrote files"
pass
