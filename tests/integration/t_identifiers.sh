# One identifier syntax (SQL's) in every command: quoted, mixed-case, doubled-quote and unicode
# table and column names are declared, listed, split, checked and fixed; the same table under
# two spellings is one table; bad names are usage errors that change nothing.
source "$(dirname "$0")/lib.sh"

fresh_fleet idents --empty --shards 2
shardctl shard add shard_1 --dsn "$(shard_dsn 1)" >/dev/null
shardctl shard add shard_2 --dsn "$(shard_dsn 2)" >/dev/null
shardctl map create tenants --kind range --key-type bigint >/dev/null
shardctl mapping add --map tenants --range ..100 --shard shard_1 >/dev/null
shardctl mapping add --map tenants --range 100.. --shard shard_2 >/dev/null

# Tenants 1..99 on shard_1, 100..199 on shard_2, in every table.
for i in 1 2; do
  lo=$(( i == 1 ? 1 : 100 )) hi=$(( i == 1 ? 99 : 199 ))
  psql_shard "$i" -q <<SQL
create schema "Sales";
create table "Sales"."Order Lines"("Tenant Id" bigint, "Line#" int, primary key ("Tenant Id", "Line#"));
create table public."we""ird"(k bigint primary key);
create table public.bestellpositionen_ü(k bigint primary key);
create table Public.MixedCase(K bigint primary key, "Note" text);
insert into "Sales"."Order Lines" select t, l from generate_series($lo, $hi) t, generate_series(1, 3) l;
insert into public."we""ird" select generate_series($lo, $hi);
insert into bestellpositionen_ü select generate_series($lo, $hi);
insert into mixedcase select t, 'n' || t from generate_series($lo, $hi) t;
SQL
done

# Rows per table on one shard, as "lines weird ü mixed".
counts() {
  psql_shard "$1" -XAtc 'select (select count(*) from "Sales"."Order Lines") || $$ $$ ||
    (select count(*) from public."we""ird") || $$ $$ || (select count(*) from bestellpositionen_ü) || $$ $$ ||
    (select count(*) from mixedcase)'
}

# Bad names: usage errors (64) naming the text, one line, nothing changed.
dump=$(catalog_dump)
bad_name() {  # bad_name TEXT EXPECTED_STDERR
  expect_exit 64 shardctl table add-sharded "$1" --map tenants --key k
  expect_stderr_contains "$2"
  [ "$(grep -c '^shardctl table: error: ' "$STDERR")" = 1 ] || fail "not one error line: $(cat "$STDERR")"
}
bad_name '"Order Lines' "table name '\"Order Lines' has an unbalanced double quote"
bad_name 'a.b.c' "table name 'a.b.c' has more than two dotted parts"
bad_name 'Sales.' "table name 'Sales.' has an empty name part"
bad_name '""' "has an empty quoted name"
bad_name 'orders x' "unexpected text after the name: 'x'"
bad_name '1abc' "starting with '1'"
bad_name "$(printf 'a%.0s' {1..64})" "longer than 63 bytes"
bad_name $'caf\xe9' "argument TABLE 'caf\\xE9' is not valid UTF-8"
expect_exit 64 shardctl table add-sharded bestellpositionen_ü --map tenants --key '"Tenant Id'
expect_stderr_contains "column name '\"Tenant Id' has an unbalanced double quote"
expect_exit 64 shardctl table add-sharded bestellpositionen_ü --map tenants --key $'k\xff'
expect_stderr_contains "is not valid UTF-8"
expect_exit 64 shardctl table add-sharded bestellpositionen_ü --map tenants --key 't.k'
expect_stderr_contains "column name 't.k'"
expect_exit 64 shardctl table add-reference 'x;drop table y'
expect_exit 64 shardctl table remove '"nope'
assert_eq "$(catalog_dump)" "$dump"

# Declared in SQL syntax; stored as raw names.
expect_exit 0 shardctl table add-sharded '"Sales"."Order Lines"' --map tenants --key '"Tenant Id"' --dry-run
expect_stdout_contains 'would declare "Sales"."Order Lines" sharded by "Tenant Id" on map tenants'
assert_eq "$(catalog_dump)" "$dump"
expect_exit 0 shardctl table add-sharded '"Sales"."Order Lines"' --map tenants --key '"Tenant Id"'
expect_stdout_contains 'declared "Sales"."Order Lines" sharded by "Tenant Id" on map tenants'
expect_exit 0 shardctl table add-sharded 'public."we""ird"' --map tenants --key K
expect_exit 0 shardctl table add-sharded bestellpositionen_ü --map tenants --key k
expect_exit 0 shardctl table add-sharded Public.MixedCase --map tenants --key K --format json
assert_eq "$(jq -r '.name + " " + .key_column' "$STDOUT")" "public.mixedcase k"
assert_eq "$(psql_catalog -XAtc "select key_column from shardctl.tables where key_column like 'Tenant%'")" "Tenant Id"

# One table, whatever the spelling.
for spelling in mixedcase '"public"."mixedcase"' 'PUBLIC . MIXEDCASE'; do
  expect_exit 64 shardctl table add-sharded "$spelling" --map tenants --key k
  expect_stderr_contains "table public.mixedcase is already declared (sharded)"
done
expect_exit 64 shardctl table add-reference '"Sales"."Order Lines"'
expect_stderr_contains 'table "Sales"."Order Lines" is already declared'
# ...but case in quotes matters, as in SQL: "MixedCase" is another table.
expect_exit 0 shardctl table add-reference '"MixedCase"' --dry-run

# Catalogs written before this syntax kept the operator's spelling ("region" quoted, MixedUp bare
# meaning exactly "MixedUp"): such rows read in display form and are found by any spelling.
psql_catalog -qc "insert into shardctl.tables (name, kind) values ('public.\"region\"', 'reference'), ('public.MixedUp', 'reference')"
expect_exit 0 shardctl table list --format json
assert_eq "$(jq -r '[.tables[] | select(.kind == "reference") | .name] | sort | join(" ")' "$STDOUT")" 'public."MixedUp" public.region'
expect_exit 64 shardctl table add-reference REGION
expect_stderr_contains "table public.region is already declared (reference)"
expect_exit 0 shardctl table remove region
expect_exit 64 shardctl table remove MixedUp
expect_stderr_contains "unknown table public.mixedup"
expect_exit 0 shardctl table remove '"MixedUp"'
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.tables where kind = 'reference'")" "0"

# An xref on quoted columns.
expect_exit 64 shardctl xref add lines_weird --child '"Sales"."Order Lines"("Tenant Id"' \
  --parent 'public."we""ird"(K)' --route '"Tenant Id"' --map tenants
expect_stderr_contains "lacks the closing ')'"
expect_exit 64 shardctl xref add lines_weird --child '"Sales"."Order Lines"("Tenant Id")' \
  --parent 'public."we""ird"(K)' --route '"Tenant' --map tenants
expect_exit 64 shardctl xref add lines_weird --child 'sales."Order Lines"("Tenant Id")' \
  --parent 'public."we""ird"(K)' --route '"Tenant Id"' --map tenants
expect_stderr_contains 'table sales."Order Lines" is not declared'
expect_exit 0 shardctl xref add lines_weird --child '"Sales"."Order Lines"("Tenant Id")' \
  --parent 'public."we""ird"(K)' --route '"Tenant Id"' --map tenants

# Listed in display form: quoted exactly where PostgreSQL's own quote_ident quotes.
expect_exit 0 shardctl table list
expect_stdout_contains '"Sales"."Order Lines"'
expect_stdout_contains '"Tenant Id"'
expect_stdout_contains 'public."we""ird"'
expect_stdout_contains 'public."bestellpositionen_ü"'
expect_stdout_contains 'public.mixedcase'
expect_exit 0 shardctl table list --format json
listed=$(jq -r '.tables[].name' "$STDOUT" | LC_ALL=C sort)
server=$(psql_shard 1 -XAtc "select format('%I.%I', n.nspname, c.relname) from pg_class c
  join pg_namespace n on n.oid = c.relnamespace where c.relkind = 'r' and n.nspname in ('public', 'Sales')" | LC_ALL=C sort)
assert_eq "$listed" "$server"
assert_eq "$(jq -r '.tables[] | select(.name == "public.\"we\"\"ird\"") | .key_column' "$STDOUT")" "k"
expect_exit 0 shardctl xref list
expect_stdout_contains '"Sales"."Order Lines"("Tenant Id")'
expect_stdout_contains 'public."we""ird"(k)'
expect_exit 0 shardctl xref list --format json
assert_eq "$(jq -c '.xrefs[0] | [.child_table, .child_columns, .parent_table, .parent_columns, .route_column]' "$STDOUT")" \
  '["\"Sales\".\"Order Lines\"",["Tenant Id"],"public.\"we\"\"ird\"",["k"],"Tenant Id"]'

# check: a clean fleet is clean.
expect_exit 0 shardctl check --format json

# split moves every table's rows for tenants 50..99 to shard_2.
assert_eq "$(counts 1)" "297 99 99 99"
assert_eq "$(counts 2)" "300 100 100 100"
expect_exit 0 shardctl split --map tenants --at 50 --to shard_2 --batch-size 20
expect_stdout_contains "done"
assert_eq "$(counts 1)" "147 49 49 49"
assert_eq "$(counts 2)" "450 150 150 150"
assert_eq "$(psql_shard 2 -XAtc 'select count(*) from "Sales"."Order Lines" where "Tenant Id" between 50 and 99')" "150"
assert_eq "$(psql_shard 1 -XAtc 'select min(k) || $$..$$ || max(k) from mixedcase')" "1..49"
expect_exit 0 shardctl check

# check finds and fixes bad rows in quoted tables: a stray on shard_1, an orphan on shard_2.
psql_shard 1 -qc 'insert into "Sales"."Order Lines" values (150, 9)'
psql_shard 2 -qc 'delete from public."we""ird" where k = 120'
expect_exit 2 shardctl check --format json
assert_eq "$(jq -r '[.findings[] | .kind + " " + .table] | unique | join(", ")' "$STDOUT")" \
  'orphans "Sales"."Order Lines", strays "Sales"."Order Lines"'
# (A fixing run exits as its findings do: 2.)
expect_exit 0 shardctl check --strays --fix quarantine --yes --format json
assert_eq "$(jq -r '.fixes[0].action + " " + .fixes[0].shard + " " + (.fixes[0].rows | tostring)' "$STDOUT")" "quarantine shard_1 1"
assert_eq "$(psql_shard 1 -XAtc 'select count(*) from "Sales"."Order Lines" where "Tenant Id" = 150')" "0"
expect_exit 0 shardctl check --restore
assert_eq "$(psql_shard 1 -XAtc 'select count(*) from "Sales"."Order Lines" where "Tenant Id" = 150')" "1"
expect_exit 0 shardctl check --strays --orphans --fix delete --yes
expect_exit 0 shardctl check
assert_eq "$(counts 1)" "147 49 49 49"
assert_eq "$(counts 2)" "447 149 150 150"

# Removing by another spelling; a table used by an xref stays until the xref goes.
expect_exit 64 shardctl table remove 'PUBLIC."we""ird"'
expect_stderr_contains 'table public."we""ird" is used by xref(s) lines_weird'
expect_exit 0 shardctl table remove MIXEDCASE
expect_exit 0 shardctl table list --format json
assert_eq "$(jq -r '[.tables[].name] | index("public.mixedcase")' "$STDOUT")" "null"

pass
