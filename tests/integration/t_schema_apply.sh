# schema apply on 4 shards: dry run changes nothing, apply, re-run is a no-op, status, JUnit,
# a repeatable file re-runs when edited, a shard registered later catches up, an edited applied
# file is refused (65) naming file and shards, bad directories are refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_apply 4
M="$TEST_TMP/migrations"
mig "$M" V1__items.sql <<'SQL'
create table items (id int primary key, email text);
SQL
mig "$M" V2__seed.sql <<'SQL'
insert into items select g, 'user' || g || '@example.com' from generate_series(1, 100) g;
alter table items add column note text default 'x';
SQL
printf -- '-- an index without blocking writers\r\n-- shardctl:no-transaction\r\ncreate index concurrently items_email on items (email);\r\n' > "$M/V10__email_index.sql"
mig "$M" R__views.sql <<'SQL'
create or replace view item_count as select count(*) as n from items;
SQL
echo "not a migration" > "$M/README.md"

# --dry-run: the plan, and not even the history table is created.
expect_exit 0 shardctl schema apply "$M" --dry-run --format json
assert_eq "$(jq -r '.shards | length' "$STDOUT")" 4
assert_eq "$(jq -r '.shards[0].pending | join(",")' "$STDOUT")" "V1__items.sql,V2__seed.sql,V10__email_index.sql,R__views.sql"
assert_eq "$(jq -r .dry_run "$STDOUT")" true
assert_eq "$(shard_value 1 "select to_regclass('shardctl.schema_history') is null")" t
expect_exit 0 shardctl schema apply "$M" --dry-run
expect_stdout_contains "V1__items.sql V2__seed.sql V10__email_index.sql R__views.sql"

# status before anything: everything pending (1).
expect_exit 1 shardctl schema status "$M"

expect_exit 0 shardctl schema apply "$M" --parallel 2 --junit "$TEST_TMP/apply.xml" --format json
assert_eq "$(jq -r '[.shards[].state] | unique | join(",")' "$STDOUT")" ok
assert_eq "$(jq -r '[.shards[].version] | unique | join(",")' "$STDOUT")" 10
assert_eq "$(jq -r '.shards[0].applied | map(.file) | join(",")' "$STDOUT")" "V1__items.sql,V2__seed.sql,V10__email_index.sql,R__views.sql"
assert_eq "$(jq -r .summary.ok "$STDOUT")" 4
for i in 1 2 3 4; do
  assert_eq "$(history "$i" | tr '\n' ' ')" "V1__items.sql|t V2__seed.sql|t V10__email_index.sql|t R__views.sql|t "
  assert_eq "$(shard_value "$i" "select n from item_count")" 100
  assert_eq "$(shard_value "$i" "select indisvalid from pg_index where indexrelid = 'items_email'::regclass")" t
done
# History rows: canonical version, kind, named algorithm, CRLF normalized (sha256sum of the LF text).
want=$(tr -d '\r' < "$M/V10__email_index.sql" | sha256sum | cut -d' ' -f1)
assert_eq "$(shard_value 1 "select version || ' ' || kind || ' ' || checksum from shardctl.schema_history where name = 'V10__email_index.sql'")" "10 versioned sha256:$want"
assert_eq "$(shard_value 1 "select count(*) from shardctl.schema_history where kind = 'repeatable' and version is null and duration_ms >= 0 and applied_by = current_user")" 1
# JUnit: one test case per shard and migration, none failed.
assert_eq "$(grep -c '<testcase ' "$TEST_TMP/apply.xml")" 16
grep -q 'tests="16" failures="0"' "$TEST_TMP/apply.xml" || fail "junit totals: $(head -3 "$TEST_TMP/apply.xml")"
grep -q 'classname="shardctl.schema.apply.'"$(shard_name 3)"'" name="V10__email_index.sql"' "$TEST_TMP/apply.xml" || fail "junit case missing"

# Re-run: nothing to do, nothing recorded.
expect_exit 0 shardctl schema apply "$M"
expect_stdout_contains "4 shard(s): 4 ok"
assert_eq "$(shard_value 2 "select count(*) from shardctl.schema_history")" 4
expect_exit 0 shardctl schema status "$M" --junit "$TEST_TMP/status.xml"
expect_stdout_contains "current"
grep -q 'failures="0"' "$TEST_TMP/status.xml" || fail "status junit has failures"
expect_exit 0 shardctl schema status --format json
assert_eq "$(jq -r .head "$STDOUT")" 10
assert_eq "$(jq -r '[.shards[].state] | unique | join(",")' "$STDOUT")" current

# A repeatable file runs again when it changes, and only it.
mig "$M" R__views.sql <<'SQL'
create or replace view item_count as select count(*) as n, max(id) as top from items;
SQL
expect_exit 1 shardctl schema status "$M"
expect_exit 0 shardctl schema apply "$M" --format json
assert_eq "$(jq -r '[.shards[].applied[].file] | unique | join(",")' "$STDOUT")" R__views.sql
assert_eq "$(shard_value 4 "select top from item_count")" 100

# A shard registered after the rollout catches up on the next run.
new_db="schema_late_$$"
psql -X -q -v ON_ERROR_STOP=1 "$(shard_dsn 4 | sed 's/dbname=[^ ]*/dbname=postgres/')" -c "create database $new_db"
late_dsn=$(shard_dsn 4 | sed "s/dbname=[^ ]*/dbname=$new_db/")
expect_exit 0 shardctl shard add late --dsn "$late_dsn"
expect_exit 1 shardctl schema status "$M" --format json
assert_eq "$(json_state late)" pending
assert_eq "$(json_state "$(shard_name 1)")" current
expect_exit 0 shardctl schema apply "$M" --format json
assert_eq "$(jq -r '.shards[] | select(.applied | length > 0) | .shard' "$STDOUT")" late
assert_eq "$(psql -X -At "$late_dsn" -c "select count(*) from shardctl.schema_history where success")" 4
expect_exit 0 shardctl schema status "$M"

# An applied file edited afterwards: refused before anything runs, naming file and shards.
cp "$M/V2__seed.sql" "$TEST_TMP/V2.orig"
echo "-- reformatted" >> "$M/V2__seed.sql"
mig "$M" V11__more.sql <<'SQL'
create table more_items (id int);
SQL
expect_exit 65 shardctl schema apply "$M" --junit "$TEST_TMP/refused.xml"
expect_stderr_contains "V2__seed.sql was changed after it was applied (on late, $(shard_name 1), $(shard_name 2) and 2 more); nothing was applied"
grep -q '<failure message="V2__seed.sql was changed' "$TEST_TMP/refused.xml" || fail "refusal not in the junit report"
assert_eq "$(shard_value 1 "select to_regclass('more_items') is null")" t
expect_exit 1 shardctl schema status "$M" --format json
assert_eq "$(jq -r '.shards[0].migrations["V2__seed.sql"]' "$STDOUT")" changed
cp "$TEST_TMP/V2.orig" "$M/V2__seed.sql"
expect_exit 0 shardctl schema apply "$M"
expect_exit 0 shardctl schema status "$M"

# Bad input: a .sql file whose name is not a migration name, a duplicate version, no DIR.
B="$TEST_TMP/bad"
mig "$B" V1__ok.sql <<< "select 1;"
mig "$B" V2_typo.sql <<< "select 2;"
expect_exit 65 shardctl schema apply "$B"
expect_stderr_contains "V2_typo.sql: not a migration file name"
rm "$B/V2_typo.sql"
mig "$B" V001__dup.sql <<< "select 1;"
expect_exit 65 shardctl schema status "$B"
expect_stderr_contains "version 1 is also the version of"
rm "$B/V001__dup.sql"
mig "$B" V2__tx.sql <<< "-- shardctl:no-transactoin
select 1;"
expect_exit 65 shardctl schema apply "$B"
expect_stderr_contains "V2__tx.sql:1:1: unknown directive"
expect_exit 64 shardctl schema apply "$TEST_TMP/missing"
expect_stderr_contains "does not exist"
expect_exit 64 shardctl schema apply
expect_exit 64 shardctl schema apply "$M" --shards nosuch
expect_exit 64 shardctl schema apply "$M" --lock-timeout soon
pass
