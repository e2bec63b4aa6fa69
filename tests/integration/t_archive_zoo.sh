# Archive on a schema unlike the sample: a quoted mixed-case schema and names, a uuid+text
# composite primary key on the root, an identity and a generated column, a partitioned
# grandchild table, and reference tables with their own foreign-key chain. Cascade to both
# destinations in batches of 7 accounts (more than one batch on each shard: the run's journal
# and the batches the process committed agree), a file loaded back with zstd and psql alone
# from the manifest's DDL, and a restore that brings every row back exactly (identity values
# kept, generated values computed).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet archzoo
zoo_all_shards <<'SQL'
create schema "Billing";
create table public.currency (code text primary key);
create table public.region_currency (region text primary key, code text not null references public.currency);
insert into public.currency values ('EUR'), ('USD');
insert into public.region_currency values ('eu', 'EUR'), ('us', 'USD');
create table "Billing"."Accounts" (
  "Acct Id" uuid not null, "Region" text not null references public.region_currency, "Opened" date not null,
  primary key ("Acct Id", "Region"));
create table "Billing"."Invoices" (
  inv_id bigint generated always as identity, "Acct Id" uuid not null, "Region" text not null,
  amount numeric(10,2) not null, amount_x2 numeric generated always as (amount * 2) stored,
  currency text not null references public.currency,
  primary key ("Acct Id", inv_id), unique (inv_id),
  foreign key ("Acct Id", "Region") references "Billing"."Accounts");
create table "Billing".payments (
  "Acct Id" uuid not null, inv_id bigint not null, pay_no int not null, paid date not null,
  primary key ("Acct Id", inv_id, pay_no, paid),
  foreign key ("Acct Id", inv_id) references "Billing"."Invoices" ("Acct Id", inv_id)) partition by range (paid);
create table "Billing".payments_old partition of "Billing".payments for values from ('2000-01-01') to ('2024-06-01');
create table "Billing".payments_new partition of "Billing".payments default;
SQL
shardctl map create acct --kind range --key-type uuid >/dev/null
shardctl mapping add --map acct --range ..80000000-0000-0000-0000-000000000000 --shard shard_1 >/dev/null
shardctl mapping add --map acct --range 80000000-0000-0000-0000-000000000000.. --shard shard_2 >/dev/null
zoo_sharded '"Billing"."Accounts"' acct '"Acct Id"'
zoo_sharded '"Billing"."Invoices"' acct '"Acct Id"'
zoo_sharded '"Billing".payments' acct '"Acct Id"'
for n in 1 2; do
  cond="< '80000000-0000-0000-0000-000000000000'"; [ "$n" = 2 ] && cond=">= '80000000-0000-0000-0000-000000000000'"
  psql_shard "$n" -q -1 <<SQL
insert into "Billing"."Accounts"
  select md5(g::text)::uuid, case when g % 2 = 0 then 'eu' else 'us' end, date '2024-01-01' + g from generate_series(1, 300) g
  where md5(g::text)::uuid $cond;
insert into "Billing"."Invoices" ("Acct Id", "Region", amount, currency)
  select a."Acct Id", a."Region", 10 + i, case when a."Region" = 'eu' then 'EUR' else 'USD' end
  from "Billing"."Accounts" a, generate_series(1, 3) i;
insert into "Billing".payments select i."Acct Id", i.inv_id, p, date '2024-03-01' + (i.inv_id % 200)::int
  from "Billing"."Invoices" i, generate_series(1, 2) p;
SQL
done
fp() {
  for n in 1 2; do psql_shard "$n" -XAtc "
    select 'a', md5(string_agg(x::text, ',' order by x::text)) from \"Billing\".\"Accounts\" x union all
    select 'i', md5(string_agg(x::text, ',' order by x::text)) from \"Billing\".\"Invoices\" x union all
    select 'p', md5(string_agg(x::text, ',' order by x::text)) from \"Billing\".payments x"; done
}
before=$(fp)
WHERE='"Opened" < '"'"'2024-06-01'"'"
cold=0; for n in 1 2; do cold=$((cold + $(psql_shard "$n" -XAtc "select count(*) from \"Billing\".\"Accounts\" where $WHERE"))); done
[ "$cold" -gt 20 ] || fail "too few cold accounts: $cold"

# Without --cascade every cold account still has invoices: all stay, and are reported.
expect_exit 0 shardctl archive run --table '"Billing"."Accounts"' --where "$WHERE" --to "dir:$TEST_TMP/none" --format json
assert_eq "$(jq -r '[.shards[].refused] | add' "$STDOUT")" "$cold"
assert_eq "$(jq -r .rows "$STDOUT")" "0"
assert_eq "$(fp)" "$before"

_unique archzoodb
psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$UNIQUE_NAME\"" >/dev/null
ARCH="$CATALOG_CLUSTER dbname=$UNIQUE_NAME"
for DEST in "postgres:$ARCH" "dir:$TEST_TMP/zoo"; do
  # SHARDCTL_FAULT_TRACE (lib/fault/fault.hpp) writes "archive-committed@SHARD/bBATCH N" once per batch
  # whose source transaction committed (lib/archive/shard_worker.cpp).
  rm -f "$TEST_TMP/archive.trace"
  SHARDCTL_FAULT_TRACE="$TEST_TMP/archive.trace" expect_exit 0 shardctl archive run --table '"Billing"."Accounts"' \
    --where "$WHERE" --cascade --to "$DEST" --batch-size 7 --name "zoo-${DEST%%:*}" --format json
  RUN=$(jq -r .id "$STDOUT")
  batches=$(jq -c '[.shards[] | [.shard, .batches]]' "$STDOUT")
  jq -e '(.shards | length) == 2 and all(.shards[]; .batches >= 2)' "$STDOUT" >/dev/null ||
    fail "archive to ${DEST%%:*}: want more than one batch on each of the 2 shards, the journal has $batches"
  committed=$(grep -c '^archive-committed[@ ]' "$TEST_TMP/archive.trace" || true)
  [ "$committed" = "$(jq '[.shards[].batches] | add' "$STDOUT")" ] ||
    fail "archive to ${DEST%%:*}: the process committed $committed batch(es), the journal has $batches"
  echo "# archive to ${DEST%%:*}: batches per shard $batches"
  assert_eq "$(jq -r '[.shards[].rows["\"Billing\".\"Accounts\""]] | add' "$STDOUT")" "$cold"
  inv=$(jq -r '[.shards[].rows["\"Billing\".\"Invoices\""]] | add' "$STDOUT")
  assert_eq "$inv" "$((cold * 3))"
  assert_eq "$(jq -r '[.shards[].rows["\"Billing\".payments"]] | add' "$STDOUT")" "$((cold * 6))"
  for n in 1 2; do
    assert_eq "$(psql_shard "$n" -XAtc "select count(*) from \"Billing\".\"Accounts\" where $WHERE")" "0"
    assert_eq "$(psql_shard "$n" -XAtc "select count(*) from \"Billing\".payments p where not exists (select 1 from \"Billing\".\"Invoices\" i where i.inv_id = p.inv_id)")" "0"
  done
  if [ "${DEST%%:*}" = postgres ]; then
    assert_eq "$(psql -X -At "$ARCH" -c "select count(*), count(distinct (\"Acct Id\", inv_id)) from \"Billing\".\"Invoices\"")" "$inv|$inv"
  else
    # A file loads into a table made from the manifest's DDL with zstd and psql alone.
    M="$TEST_TMP/zoo/$RUN/manifest.json"
    _unique loadcheck
    psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$UNIQUE_NAME\"" >/dev/null
    L="$CATALOG_CLUSTER dbname=$UNIQUE_NAME"
    psql -X -q "$L" -c 'create schema "Billing"' -c "$(jq -r '.ddl["\"Billing\".\"Invoices\""]' "$M")"
    for f in $(jq -r '.files[] | select(.table == "\"Billing\".\"Invoices\"") | .path' "$M"); do
      zstd -qdc "$TEST_TMP/zoo/$RUN/$f" | psql -X -q "$L" -c 'copy "Billing"."Invoices" from stdin'
    done
    assert_eq "$(psql -X -At "$L" -c 'select count(*) from "Billing"."Invoices"')" "$inv"
  fi
  expect_exit 0 shardctl archive restore "$RUN"
  assert_eq "$(fp)" "$before"
done
pass
