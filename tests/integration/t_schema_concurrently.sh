# A no-transaction file (CREATE UNIQUE INDEX CONCURRENTLY) fails halfway on one shard (duplicate
# data): exit 2, the INVALID index is reported with the command to drop it, no history row says
# it succeeded; after the fix (data + drop) a re-run converges. The file's statements run
# outside a transaction, while the rollout lock is held.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_cic 2
s1=$(shard_name 1) s2=$(shard_name 2)
M="$TEST_TMP/migrations"
mig "$M" V1__users.sql <<'SQL'
create table users (id int primary key, email text);
insert into users select g, 'u' || g from generate_series(1, 1000) g;
SQL
expect_exit 0 shardctl schema apply "$M"
psql_shard 2 -qc "insert into users values (1001, 'u7')"
mig "$M" V2__unique_email.sql <<'SQL'
-- Unique e-mail addresses, built without blocking writes.
-- shardctl:no-transaction
create unique index concurrently users_email_key on users (email);
SQL
expect_exit 2 shardctl schema apply "$M" --format json
assert_eq "$(json_state "$s1")/$(json_state "$s2")" "ok/failed"
assert_eq "$(jq -r --arg s "$s2" '.shards[] | select(.shard == $s) | .invalid_indexes[0].drop' "$STDOUT")" \
  "DROP INDEX CONCURRENTLY IF EXISTS public.users_email_key;"
assert_eq "$(jq -r --arg s "$s2" '.shards[] | select(.shard == $s) | .error' "$STDOUT")" \
  'V2__unique_email.sql:3:1: could not create unique index "users_email_key"'
expect_stderr_contains "hint: Key (email)=(u7) is duplicated."
expect_stderr_contains "hint: drop the INVALID index public.users_email_key before the next run: DROP INDEX CONCURRENTLY IF EXISTS public.users_email_key;"
assert_eq "$(shard_value 2 "select indisvalid from pg_index where indexrelid = 'users_email_key'::regclass")" f
assert_eq "$(shard_value 1 "select indisvalid from pg_index where indexrelid = 'users_email_key'::regclass")" t
assert_eq "$(history 2 | tr '\n' ' ')" "V1__users.sql|t V2__unique_email.sql|f "
expect_exit 2 shardctl schema apply "$M"
expect_stdout_contains "$s2: index public.users_email_key on public.users is INVALID"
expect_exit 2 shardctl schema status "$M"

# Fix: the duplicate goes, the invalid index is dropped as told; the re-run converges.
psql_shard 2 -qc "delete from users where id = 1001"
psql_shard 2 -qc "DROP INDEX CONCURRENTLY IF EXISTS public.users_email_key"
expect_exit 0 shardctl schema apply "$M" --format json
assert_eq "$(jq -r '[.shards[].version] | unique | join(",")' "$STDOUT")" 2
assert_eq "$(shard_value 2 "select indisvalid from pg_index where indexrelid = 'users_email_key'::regclass")" t
expect_exit 0 shardctl schema status "$M"
pass
