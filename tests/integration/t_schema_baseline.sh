# schema baseline adopts shards that already have the schema: records the version (and, with
# DIR, each file's checksum) without running anything; apply then runs only what is newer; a
# shard with a history is refused (65, nothing changed anywhere); the same baseline again is a
# no-op and covers shards added since; --dry-run changes nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_base 3
s1=$(shard_name 1) s2=$(shard_name 2) s3=$(shard_name 3)
M="$TEST_TMP/migrations"
mig "$M" V1__t.sql <<'SQL'
create table t (id int primary key);
SQL
mig "$M" V2__u.sql <<'SQL'
alter table t add column u int;
SQL
mig "$M" V3__w.sql <<'SQL'
alter table t add column w int;
SQL
# The fleet was built before shardctl: V1 and V2 are there already.
for i in 1 2 3; do psql_shard "$i" -qc "create table t (id int primary key, u int)"; done

expect_exit 0 shardctl schema baseline --version 2 "$M" --dry-run
expect_stdout_contains "would record version 2 with 2 file(s)"
assert_eq "$(shard_value 1 "select to_regclass('shardctl.schema_history') is null")" t
expect_exit 64 shardctl schema baseline --version two
expect_exit 0 shardctl schema baseline --version 2 "$M" --shards "$s1,$s2" --format json
assert_eq "$(jq -r '[.shards[].version] | join(",")' "$STDOUT")" "2,2"
assert_eq "$(shard_value 1 "select string_agg(kind || ':' || name || ':' || coalesce(version, '-') || ':' || (checksum is not null), ' ' order by id) from shardctl.schema_history")" \
  "baseline:V1__t.sql:1:true baseline:V2__u.sql:2:true baseline:<baseline>:2:false"
expect_exit 1 shardctl schema status "$M" --format json
assert_eq "$(jq -r --arg s "$s1" '.shards[] | select(.shard == $s) | .migrations | [.["V1__t.sql"], .["V2__u.sql"], .["V3__w.sql"]] | join(",")' "$STDOUT")" "baseline,baseline,pending"
assert_eq "$(json_state "$s3")" pending

# The same baseline again: nothing changes on s1/s2, s3 is baselined too.
expect_exit 0 shardctl schema baseline --version 2 "$M"
assert_eq "$(shard_value 1 "select count(*) from shardctl.schema_history")" 3
assert_eq "$(shard_value 3 "select count(*) from shardctl.schema_history")" 3

# apply runs only V3 (V1 would fail: t exists).
expect_exit 0 shardctl schema apply "$M" --format json
assert_eq "$(jq -r '[.shards[].applied[].file] | unique | join(",")' "$STDOUT")" V3__w.sql
expect_exit 0 shardctl schema status "$M"

# A shard with a history is refused, and then no shard changes.
psql -X -q -v ON_ERROR_STOP=1 "$(shard_dsn 1 | sed 's/dbname=[^ ]*/dbname=postgres/')" -c "create database schema_base_new_$$"
expect_exit 0 shardctl shard add new --dsn "$(shard_dsn 1 | sed "s/dbname=[^ ]*/dbname=schema_base_new_$$/")"
expect_exit 65 shardctl schema baseline --version 3
expect_stderr_contains "baseline is for shards without a schema history; refused, nothing changed: $s1 (it already has a schema history (4 row(s), at version 3))"
assert_eq "$(psql -X -At "$(shard_dsn 1 | sed "s/dbname=[^ ]*/dbname=schema_base_new_$$/")" -c "select to_regclass('shardctl.schema_history') is null")" t
# Only the new shard, by name: it is at 3 without running anything; an edited V1 is then caught.
expect_exit 0 shardctl schema baseline --version 3 "$M" --shards new
expect_exit 0 shardctl schema status "$M"
echo "-- edited" >> "$M/V1__t.sql"
expect_exit 65 shardctl schema apply "$M"
expect_stderr_contains "V1__t.sql was changed after it was applied (on new, $s1, $s2 and 1 more)"
pass
