# Schema zoo, part 3: identifiers and table shapes unlike the sample. A mixed-case
# schema "Sales" with tables "Customers" and "Order Lines" keyed by column "Tenant Id", a
# table with a doubled quote in its name, a table named bestellpositionen_ü, an unquoted
# mixed-case name that folds to lower case, a partitioned sharded table (range partitions, key
# indexed on the parent), and an xref over quoted columns: split, split, merge and move, each
# in several batches, check after each.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet zoonames
zoo_all_shards <<'SQL'
create schema "Sales";
create table "Sales"."Customers" ("Tenant Id" bigint primary key, "Name" text not null, "Since" date not null);
create table "Sales"."Order Lines" (
  "Tenant Id" bigint not null references "Sales"."Customers",
  "Line No"   int not null,
  "Qty"       int not null,
  "Order Ref" int not null,
  primary key ("Tenant Id", "Line No")
);
create table "Sales"."we""ird" ("Tenant Id" bigint not null, "x" int not null, primary key ("Tenant Id", "x"));
create table public.bestellpositionen_ü (mandant bigint not null, pos int not null, artikel text not null,
                                         primary key (mandant, pos));
create table public.lineitems_mixed (tenant_id bigint not null, item int not null, primary key (tenant_id, item));
-- Partitioned by date; the key (tenant) leads the parent's primary key.
create table "Sales".events (tenant bigint not null, at date not null, kind text not null, primary key (tenant, at, kind))
  partition by range (at);
create table "Sales".events_2024 partition of "Sales".events for values from ('2024-01-01') to ('2025-01-01');
create table "Sales".events_2025 partition of "Sales".events for values from ('2025-01-01') to ('2026-01-01');
create table "Sales".events_rest partition of "Sales".events default;
-- Partitioned by list on a non-key column, key indexed (not unique) on the parent.
create table "Sales".audit (tenant bigint not null, channel text not null, msg text not null) partition by list (channel);
create table "Sales".audit_web partition of "Sales".audit for values in ('web');
create table "Sales".audit_app partition of "Sales".audit for values in ('app', 'ios');
create unique index on "Sales".audit (tenant, channel, msg);
SQL
if [ -n "${ZOO_ONLINE:-}" ]; then
  # Online (t_zoo_online_names.sh): "Sales".audit has no primary key; its unique index becomes
  # the replica identity of the partitioned table here, and of each partition below (the
  # server neither passes it down nor publishes a partition's changes without it).
  zoo_all_shards <<<'alter table "Sales".audit replica identity using index audit_tenant_channel_msg_idx'
fi
# Online: each move's first batch streams writes (zoo_lib.sh, ZOO_STREAM_WRITE) through the
# quoted names, and rows that change partition (events swaps one row from 2024 to 2025 and one
# back, so each partition keeps its count; audit moves one from 'web' to 'ios'). No row of
# bestellpositionen_ü comes or goes: the test counts them at the end.
ZOO_STREAM_KEYS='select "Tenant Id"::text from "Sales"."Customers"'
ZOO_STREAM_WRITE="
update \"Sales\".\"Customers\" set \"Name\" = \"Name\" || ' (streamed)' where \"Tenant Id\" = any(:'keys'::bigint[]);
update \"Sales\".\"Order Lines\" set \"Qty\" = \"Qty\" + 1 where \"Tenant Id\" = any(:'keys'::bigint[]);
insert into \"Sales\".\"Order Lines\" select \"Tenant Id\", max(\"Line No\") + 1, 7, 4242 from \"Sales\".\"Order Lines\"
  where \"Tenant Id\" = any(:'keys'::bigint[]) group by \"Tenant Id\";
delete from \"Sales\".\"we\"\"ird\" where \"Tenant Id\" = (:'keys'::bigint[])[1] and x = 1;
update bestellpositionen_ü set artikel = artikel || ' – geändert' where mandant = any(:'keys'::bigint[]);
insert into lineitems_mixed select tenant_id, max(item) + 1 from lineitems_mixed where tenant_id = any(:'keys'::bigint[]) group by tenant_id;
update \"Sales\".events set at = at + 366 where tenant = (:'keys'::bigint[])[1] and at = date '2024-03-01' and kind = 'open';
update \"Sales\".events set at = at - 365 where tenant = (:'keys'::bigint[])[1] and at = date '2025-07-01' and kind = 'close';
update \"Sales\".events set kind = kind || '+' where tenant = (:'keys'::bigint[])[2];
update \"Sales\".audit set channel = 'ios', msg = msg || ' (was web)' where tenant = (:'keys'::bigint[])[1] and channel = 'web';
update \"Sales\".audit set msg = msg || ' (streamed)' where tenant = (:'keys'::bigint[])[2] and channel = 'app';
delete from \"Sales\".audit where tenant = (:'keys'::bigint[])[2] and channel = 'ios';"

zoo_map sales range bigint
zoo_sharded '"Sales"."Order Lines"' sales '"Tenant Id"'
zoo_sharded '"Sales"."Customers"' sales '"Tenant Id"'
zoo_sharded '"Sales"."we""ird"' sales '"Tenant Id"'
zoo_sharded bestellpositionen_ü sales mandant
zoo_sharded '"Sales".events' sales tenant
zoo_sharded '"Sales".audit' sales tenant
# Unquoted names fold to lower case: Public.LineItems_Mixed is public.lineitems_mixed, and the
# key Tenant_ID is tenant_id. (Recorded for the checks in its folded form.)
expect_exit 0 shardctl table add-sharded Public.LineItems_Mixed --map sales --key Tenant_ID
ZOO_SHARDED+=("public.lineitems_mixed|sales|tenant_id")
expect_exit 0 shardctl table list --format json
grep -q "lineitems_mixed" "$STDOUT" || { cat "$STDOUT" >&2; fail "folded name not listed"; }
grep -q "LineItems" "$STDOUT" && { cat "$STDOUT" >&2; fail "unquoted name not folded to lower case"; }
# An xref over quoted columns.
expect_exit 0 shardctl xref add order_lines_customer --child '"Sales"."Order Lines"("Tenant Id")' \
  --parent '"Sales"."Customers"("Tenant Id")' --route '"Tenant Id"' --map sales

psql_shard 1 -q -1 <<'SQL'
insert into "Sales"."Customers" select t, 'Kunde ' || t, date '2022-01-01' + t from generate_series(1, 300) t;
insert into "Sales"."Order Lines" select t, l, 1 + (t + l) % 9, 1000 + l from generate_series(1, 300) t, generate_series(1, 3) l;
insert into "Sales"."we""ird" select t, x from generate_series(1, 300) t, generate_series(1, 2) x;
insert into bestellpositionen_ü select t, p, 'Artikel Nr. ' || p || ' – Größe ' || (t % 5) from generate_series(1, 300) t, generate_series(1, 2) p;
insert into lineitems_mixed select t, i from generate_series(1, 300) t, generate_series(1, 2) i;
insert into "Sales".events select t, d, k from generate_series(1, 300) t,
  unnest(array[date '2024-03-01', date '2025-07-01', date '2027-01-01']) d, unnest(array['open', 'close']) k;
insert into "Sales".audit select t, c, 'msg ' || t from generate_series(1, 300) t, unnest(array['web', 'app', 'ios']) c;
analyze;
SQL
zoo_baseline
echo "# baseline: $ZOO_BASE_SHARDED"
zoo_verify "initial load"
# The orphan check sees the quoted xref: a line without its customer is found.
psql_shard 1 -q -1 -c "set session_replication_role = replica" -c "insert into \"Sales\".\"Order Lines\" values (999, 1, 1, 1)"
expect_exit 2 shardctl check --orphans --format json
found=$(jq -c '[.findings[] | [.kind, .shard, .table, .object, .count, .samples]]' "$STDOUT")
[ "$found" = '[["orphans","shard_1","\"Sales\".\"Order Lines\"","order_lines_customer",1,["999"]]]' ] ||
  fail "orphan through the quoted xref: want the one line of tenant 999 on shard_1, found $found"
psql_shard 1 -qc "delete from \"Sales\".\"Order Lines\" where \"Tenant Id\" = 999"
# The checks can fail: a partition row on the wrong shard.
psql_shard 2 -qc "insert into \"Sales\".events values (7, date '2024-05-05', 'stray')"
must_fail "partition row on the wrong shard" \
  "control: rows of map sales on a shard the map does not route them to: 7 on shard_2, routed to shard_1" zoo_assert_routed control
must_fail "partition row added" 'control: sharded rows changed in "Sales".events (fingerprint: < before, > after)' \
  zoo_assert_unchanged control
psql_shard 2 -qc "delete from \"Sales\".events"

if [ -n "${ZOO_ONLINE:-}" ]; then
  # An online move refuses partitions whose replica identity lacks the key, though their
  # parent's has it: 64, with nothing journaled and no stream object left.
  dump=$(catalog_dump)
  expect_exit 64 shardctl split --map sales --at 100 --to shard_2 --batch-size 30 --online
  expect_stderr_contains 'shard shard_1: table "Sales"."audit" (partition "Sales".audit_app): its replica identity (DEFAULT, and it has no primary key) does not include key column tenant'
  expect_stderr_contains '(and 1 more unmet requirement)'
  assert_eq "$(catalog_dump)" "$dump"
  for ((i = 1; i <= ZOO_SHARDS; i++)); do assert_eq "$(shardctl_streams "$i")" ""; done
  zoo_assert_unchanged "partitions without identity refused"
  zoo_all_shards <<'SQL'
do $$
declare r record;
begin
  for r in select x.indrelid::regclass as tbl, c.relname as idx
           from pg_inherits i join pg_index x on x.indexrelid = i.inhrelid join pg_class c on c.oid = x.indexrelid
           where i.inhparent = '"Sales".audit_tenant_channel_msg_idx'::regclass loop
    execute format('alter table %s replica identity using index %I', r.tbl, r.idx);
  end loop;
end $$;
SQL
fi
zoo_op "split at 100 to shard_2" split --map sales --at 100 --to shard_2 --batch-size 30
assert_eq "$(zoo_mappings sales)" "..100>shard_1 100..>shard_2"
# The partitioned table's rows landed in the matching partitions on the target.
assert_eq "$(psql_shard 2 -XAtc "select string_agg(tableoid::regclass::text || ':' || n, ' ' order by tableoid::regclass::text) from
  (select tableoid, count(*) n from \"Sales\".events group by tableoid) x")" \
  '"Sales".events_2024:402 "Sales".events_2025:402 "Sales".events_rest:402'
zoo_op "split at 200 to shard_3" split --map sales --at 200 --to shard_3 --batch-size 30
zoo_op "merge 100.. into shard_4" merge --map sales --range 100.. --into shard_4 --batch-size 40
assert_eq "$(zoo_mappings sales)" "..100>shard_1 100..>shard_4"
zoo_op "move ..100 to shard_2" move --map sales --key 5 --to shard_2 --batch-size 25
assert_eq "$(zoo_mappings sales)" "..100>shard_2 100..>shard_4"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from bestellpositionen_ü")" "0"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from bestellpositionen_ü")" "198"
pass
