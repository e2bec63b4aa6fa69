# check --fix on tables unlike the sample: no primary key (with two identical bad rows), a
# GENERATED ALWAYS identity column with a stored generated column, and a mixed-case quoted
# table "Sales"."Order Notes". Quarantine then restore gives identical rows (same identity
# values, generated columns recomputed); delete removes exactly the bad rows. In batches of 2:
# the three bad no-PK rows (picked by ctid) are quarantined by two transactions.
source "$(dirname "$0")/lib.sh"

fresh_fleet check_fix_zoo --shards 3 --scale 1
# customers ..334 on shard_1, 334..667 on shard_2, 667.. on shard_3
for i in 1 2 3; do
  psql_shard $i -q <<'SQL'
create table public.zoo_nopk (customer_id bigint not null, body text);
create table public.zoo_ident (id bigint generated always as identity primary key, customer_id bigint not null,
                               qty int not null, total int generated always as (qty * 2) stored);
create schema "Sales";
create table "Sales"."Order Notes" ("Note Id" int primary key, customer_id bigint not null, "Text" text);
SQL
done
shardctl table add-sharded public.zoo_nopk --map customers --key customer_id >/dev/null
shardctl table add-sharded public.zoo_ident --map customers --key customer_id >/dev/null
# The documented quoted form (identifier parsing is being reworked elsewhere; whatever name
# form the catalog stores, findings name the table as registered).
shardctl table add-sharded '"Sales"."Order Notes"' --map customers --key customer_id >/dev/null
notes_name=$(shardctl table list --format json | jq -r '[.tables[] | .name | select(test("Order Notes"))][0] // ""')
[ -n "$notes_name" ] || fail "\"Sales\".\"Order Notes\" was not registered"

# Good rows where the map routes them; identity values differ per shard (restart).
psql_shard 1 -qc "insert into zoo_nopk values (1, 'a'), (2, 'b'), (2, 'b');
                  insert into zoo_ident (customer_id, qty) select g, g from generate_series(1, 5) g;
                  insert into \"Sales\".\"Order Notes\" values (1, 1, 'one'), (2, 2, 'two')"
psql_shard 3 -qc "alter table zoo_ident alter column id restart with 1000;
                  insert into zoo_nopk values (700, 'c');
                  insert into zoo_ident (customer_id, qty) select g, 1 from generate_series(700, 703) g;
                  insert into \"Sales\".\"Order Notes\" values (1, 700, 'seven')"

# Every zoo row with its shard: table, shard, count, sum of a hash of the row's text.
zoo_fingerprint() {
  local i
  for i in 1 2 3; do
    psql_shard $i -XAtc "select t || ' shard_$i ' || count(*) || ' ' || coalesce(sum(('x' || substr(md5(r), 1, 16))::bit(64)::bigint::numeric), 0)
      from (select 'nopk' t, x::text r from public.zoo_nopk x
            union all select 'ident', x::text from public.zoo_ident x
            union all select 'notes', x::text from \"Sales\".\"Order Notes\" x) a group by t order by t"
  done
}
expect_exit 0 shardctl check --strays --format json
assert_eq "$(jq -r '.findings | length' "$STDOUT")" "0"
clean=$(zoo_fingerprint)

# Bad rows on shard_1, all routed to shard_3: two identical no-PK rows and one more, two
# identity rows, one note.
psql_shard 1 -qc "insert into zoo_nopk values (900, 'x'), (900, 'x'), (901, 'y');
                  insert into zoo_ident (customer_id, qty) values (900, 7), (901, 8);
                  insert into \"Sales\".\"Order Notes\" values (9, 900, 'stray note')"
damaged=$(zoo_fingerprint)
# Findings name a table as registered; fixes as schema.table from pg_catalog.
stray_counts() { jq -c --arg n "$notes_name" '[.findings[] | select(.kind == "strays") | [.shard, (if .table == $n then "Sales.Order Notes" else .table end), .count]] | sort' "$STDOUT"; }
want='[["shard_1","Sales.Order Notes",1],["shard_1","public.zoo_ident",2],["shard_1","public.zoo_nopk",3]]'

# Quarantine: every bad row leaves its table, nothing else does.
expect_exit 0 shardctl check --strays --fix quarantine --batch-size 2 --format json
assert_eq "$(stray_counts)" "$want"
assert_eq "$(jq -c '[.fixes[] | [.shard, .table, .rows]] | sort' "$STDOUT")" "$want"
assert_eq "$(zoo_fingerprint)" "$clean"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from shardctl_quarantine.\"public.zoo_nopk\"")" "3"
per=$(psql_shard 1 -XAtc "select string_agg(n::text, ',' order by n) from (select count(*) n from shardctl_quarantine.\"public.zoo_nopk\" group by xmin::text) b")
[ "$per" = "1,2" ] || fail "quarantine of public.zoo_nopk in batches of 2: rows per transaction [$per], want [1,2]"
assert_eq "$(psql_shard 1 -XAtc "select string_agg(id || ':' || total, ',' order by id) from shardctl_quarantine.\"public.zoo_ident\"")" "6:14,7:16"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from shardctl_quarantine.\"Sales.Order Notes\"")" "1"
expect_exit 0 shardctl check --strays --format json

# Restore: the same rows again, identity values kept, generated columns recomputed.
expect_exit 0 shardctl check --restore --format json
assert_eq "$(jq -c '[.fixes[] | [.shard, .table, .rows]] | sort' "$STDOUT")" "$want"
assert_eq "$(zoo_fingerprint)" "$damaged"
assert_eq "$(psql_shard 1 -XAtc "select string_agg(id || ':' || total, ',' order by id) from zoo_ident where customer_id >= 900")" "6:14,7:16"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from pg_namespace where nspname = 'shardctl_quarantine'")" "0"
# The identity sequence still hands out new values after the restore.
psql_shard 1 -qc "insert into zoo_ident (customer_id, qty) values (3, 3); delete from zoo_ident where id = 8"

# Delete: exactly the bad rows go (both identical no-PK rows, not their twins elsewhere).
expect_exit 0 shardctl check --strays --fix delete --yes --batch-size 2 --format json
assert_eq "$(jq -c '[.fixes[] | [.shard, .table, .rows]] | sort' "$STDOUT")" "$want"
assert_eq "$(zoo_fingerprint)" "$clean"
expect_exit 0 shardctl check --strays --format json
pass
