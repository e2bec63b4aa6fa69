# A rollout killed (SIGKILL) while CREATE INDEX CONCURRENTLY waits behind an open transaction:
# the file's row says "started" before the statement ran; the orphaned backend keeps the
# rollout lock until it ends (75, the holder named without stray punctuation), then the lock is
# free; the next apply stops at the started file (exit 2) saying what to check and how to
# record it, never "already exists"; `schema repair` records it (journaled in the history),
# refusing to mark applied a file whose index is INVALID. An INVALID index where a file's index
# should be (CREATE INDEX ... IF NOT EXISTS over a leftover one, or found later under a file
# recorded as applied) fails apply and status with the DROP to run. A history table of the
# first shape (success NOT NULL, no note) is upgraded by the first apply. Every kill lands in
# the build: the test waits until the build waits for the test's own open transaction.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_kill 2
s1=$(shard_name 1) s2=$(shard_name 2)
M="$TEST_TMP/migrations"
mig "$M" V1__acct.sql <<'SQL'
create table acct (id int primary key, email text);
insert into acct select g, 'u' || g from generate_series(1, 1000) g;
SQL
expect_exit 0 shardctl schema apply "$M"

# kill_in_build FILE INDEX: starts apply on shard 1 while a session keeps a write transaction
# open on acct, waits until FILE's CREATE INDEX CONCURRENTLY waits for that transaction, and
# kills apply (SIGKILL). The writer session stays open; the build's backend pid is in $build_pid.
kill_in_build() {
  session_open writer "$(shard_dsn 1)"
  session_send writer "begin; insert into acct values (100000, 'writer');"
  wait_until "writer" sql_true "$(shard_dsn 1)" "select exists (select from pg_stat_activity
                                                  where application_name = 'writer' and state = 'idle in transaction')"
  "$SHARDCTL_BIN/shardctl" schema apply "$M" --shards "$s1" --lock-timeout 1h > "$TEST_TMP/killed.out" 2>&1 &
  local apply=$!
  wait_until "$1 waits in its build" sql_true "$(shard_dsn 1)" "select exists (select from pg_stat_activity
      where application_name = 'shardctl schema' and query ilike 'create %index concurrently%$2%' and wait_event_type = 'Lock')"
  build_pid=$(shard_value 1 "select pid from pg_stat_activity where application_name = 'shardctl schema' and query ilike 'create %index%'")
  kill -9 "$apply"
  wait "$apply" 2>/dev/null || true  # (the shell reports the kill on stderr otherwise)
}
backend_gone() { wait_until "backend $1 to end" sql_true "$(shard_dsn 1)" "select not exists (select from pg_stat_activity where pid = $1)"; }

# --- killed during the build; the build then succeeds on its own --------------------------------
mig "$M" V2__acct_email.sql <<'SQL'
-- shardctl:no-transaction
create unique index concurrently acct_email_key on acct (email);
SQL
kill_in_build V2__acct_email.sql acct_email_key
assert_eq "$(history 1 | tr '\n' ' ')" "V1__acct.sql|t V2__acct_email.sql|? "
# The orphaned backend still holds the rollout lock: 75, naming it; the line ends with its state.
expect_exit_guarded 75 shardctl schema apply "$M" --shards "$s1" --lock-timeout 200ms
expect_stderr_contains "shardctl schema: error: shard $s1 (locked): the schema rollout lock of shard $s1 is held by pid $build_pid (application_name shardctl schema, client local, user postgres, connected since "
grep -qE "is held by pid $build_pid \(application_name shardctl schema, client local, user postgres, connected since [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} [^,()]+, active\)$" "$STDERR" ||
  fail "the holder's description: $(cat "$STDERR")"
expect_stderr_contains "the next run takes the lock over once that session is gone"
# Meanwhile status says the file is running (1), not failed.
expect_exit 1 shardctl schema status "$M" --shards "$s1" --format json
assert_eq "$(json_state "$s1")/$(jq -r ".shards[0].migrations[\"V2__acct_email.sql\"]" "$STDOUT")" "running/started"
session_close writer
backend_gone "$build_pid"
assert_eq "$(shard_value 1 "select indisvalid from pg_index where indexrelid = 'acct_email_key'::regclass")" t
# The lock was taken over; the run stops at the file nobody knows the end of, and says so.
expect_exit 2 shardctl schema apply "$M" --shards "$s1" --format json
assert_eq "$(json_state "$s1")" failed
started_at=$(shard_value 1 "select applied_at::text from shardctl.schema_history where name = 'V2__acct_email.sql'")
assert_eq "$(jq -r '.shards[0].error' "$STDOUT")" \
  "V2__acct_email.sql started at $started_at (by postgres) and never finished: its run was interrupted, so what its statements did is not known; nothing ran on this shard"
expect_stderr_contains "hint: check what V2__acct_email.sql did on shard $s1 (an INVALID index it left is listed below), then record it: \`shardctl schema repair $M --shards $s1 --mark-applied V2__acct_email.sql\` if all of it took effect, or \`--mark-failed V2__acct_email.sql\` to have the next apply run it again (after undoing what it did)"
! grep -q "already exists" "$STDERR" || fail "a bare 'already exists': $(cat "$STDERR")"
assert_eq "$(history 1 | tr '\n' ' ')" "V1__acct.sql|t V2__acct_email.sql|? "
expect_exit 2 shardctl schema status "$M" --format json
assert_eq "$(json_state "$s1")/$(json_state "$s2")" "interrupted/pending"
assert_eq "$(jq -r --arg s "$s1" '.shards[] | select(.shard == $s) | .started[0].file' "$STDOUT")" V2__acct_email.sql
expect_exit 2 shardctl schema status
expect_exit 2 shardctl schema apply "$M" --dry-run
expect_stdout_contains "$s1: V2__acct_email.sql started at $started_at and never finished; apply stops there until \`shardctl schema repair\` records what it did"

# The index is valid: every statement took effect. Marked applied (a dry run first: nothing).
expect_exit 0 shardctl schema repair "$M" --shards "$s1" --mark-applied V2__acct_email.sql --dry-run --format json
assert_eq "$(jq -r '.shards[0] | "\(.was) \(.recorded)"' "$STDOUT")" "started true"
assert_eq "$(history 1 | tr '\n' ' ')" "V1__acct.sql|t V2__acct_email.sql|? "
expect_exit 0 shardctl schema repair "$M" --shards "$s1" --mark-applied V2__acct_email.sql
expect_stdout_contains "marked V2__acct_email.sql applied on 1 shard(s)"
assert_eq "$(history 1 | tr '\n' ' ')" "V1__acct.sql|t V2__acct_email.sql|? V2__acct_email.sql|t "
assert_eq "$(shard_value 1 "select note from shardctl.schema_history order by id desc limit 1")" \
  "marked applied by shardctl schema repair (it was started)"
expect_exit 0 shardctl schema repair "$M" --shards "$s1" --mark-applied V2__acct_email.sql  # again: nothing to do
assert_eq "$(history 1 | wc -l)" 3
expect_exit 0 shardctl schema apply "$M"
assert_eq "$(history 2 | tr '\n' ' ')" "V1__acct.sql|t V2__acct_email.sql|t "
expect_exit 0 shardctl schema status "$M"

# --- killed during the build; the build is then cancelled: an INVALID index -------------------
mig "$M" V3__acct_name.sql <<'SQL'
-- shardctl:no-transaction
create index concurrently acct_name on acct (email, id);
SQL
kill_in_build V3__acct_name.sql acct_name
psql_shard 1 -XAtqc "select pg_cancel_backend($build_pid)" >/dev/null
backend_gone "$build_pid"
session_close writer
expect_exit 2 shardctl schema apply "$M" --shards "$s1"
expect_stderr_contains "shard $s1 (failed): V3__acct_name.sql started at "
expect_stderr_contains "hint: drop the INVALID index public.acct_name before the next run: DROP INDEX CONCURRENTLY IF EXISTS public.acct_name;"
expect_exit 2 shardctl schema status "$M"
expect_stdout_contains "$s1: index public.acct_name on public.acct is INVALID (V3__acct_name.sql creates it); drop it with: DROP INDEX CONCURRENTLY IF EXISTS public.acct_name;"
# Not applied: refused, nothing changed anywhere.
expect_exit 65 shardctl schema repair "$M" --mark-applied V3__acct_name.sql
expect_stderr_contains "cannot mark V3__acct_name.sql applied; refused, nothing changed: $s1 (index public.acct_name, which V3__acct_name.sql creates, is INVALID: the file did not complete (drop the index with DROP INDEX CONCURRENTLY IF EXISTS public.acct_name; and mark the file failed instead)); $s2 (V3__acct_name.sql never ran there (\`shardctl schema apply\` runs it))"
assert_eq "$(history 1 | tr '\n' ' ')" "V1__acct.sql|t V2__acct_email.sql|? V2__acct_email.sql|t V3__acct_name.sql|? "
expect_exit 64 shardctl schema repair "$M" --shards "$s1"
expect_stderr_contains "give one of --mark-applied FILE and --mark-failed FILE"
expect_exit 64 shardctl schema repair "$M" --shards "$s1" --mark-failed V9__nothing.sql
expect_stderr_contains "no migration file 'V9__nothing.sql' in $M"
psql_shard 1 -qc "DROP INDEX CONCURRENTLY IF EXISTS public.acct_name"
expect_exit 0 shardctl schema repair "$M" --shards "$s1" --mark-failed V3__acct_name.sql
assert_eq "$(history 1 | tail -1)" "V3__acct_name.sql|f"
expect_exit 0 shardctl schema apply "$M"
assert_eq "$(shard_value 1 "select indisvalid from pg_index where indexrelid = 'acct_name'::regclass")" t
expect_exit 0 shardctl schema status "$M"

# --- IF NOT EXISTS over a leftover INVALID index: not applied, reported with the DROP ------------
psql_shard 2 -qc "insert into acct values (5000, 'U7')"
psql_shard 2 -qc "create unique index concurrently acct_lower_email on acct (lower(email))" 2>/dev/null &&
  fail "the duplicate did not fail the build"
psql_shard 2 -qc "delete from acct where id = 5000"
mig "$M" V4__lower_email.sql <<'SQL'
-- shardctl:no-transaction
create unique index concurrently if not exists acct_lower_email on acct (lower(email));
SQL
expect_exit 2 shardctl schema apply "$M" --parallel 1 --format json
assert_eq "$(json_state "$s1")/$(json_state "$s2")" "ok/failed"
assert_eq "$(jq -r --arg s "$s2" '.shards[] | select(.shard == $s) | .error' "$STDOUT")" \
  "V4__lower_email.sql: index public.acct_lower_email on public.acct that it creates is INVALID (an earlier CREATE INDEX CONCURRENTLY failed, and the file kept that index)"
expect_stderr_contains "hint: drop the INVALID index public.acct_lower_email before the next run: DROP INDEX CONCURRENTLY IF EXISTS public.acct_lower_email;"
assert_eq "$(history 2 | tail -1)" "V4__lower_email.sql|f"
expect_exit 2 shardctl schema status "$M"
expect_stdout_contains "$s2: index public.acct_lower_email on public.acct is INVALID (V4__lower_email.sql creates it)"
psql_shard 2 -qc "DROP INDEX CONCURRENTLY IF EXISTS public.acct_lower_email"
expect_exit 0 shardctl schema apply "$M"
expect_exit 0 shardctl schema status "$M"

# --- an INVALID index where a file recorded as applied puts its index (as an earlier version
# recorded IF NOT EXISTS over one): status and apply fail naming it and the DROP.
psql_shard 1 -qc "DROP INDEX CONCURRENTLY acct_lower_email"
psql_shard 1 -qc "insert into acct values (5000, 'U7')"
psql_shard 1 -qc "create unique index concurrently acct_lower_email on acct (lower(email))" 2>/dev/null &&
  fail "the duplicate did not fail the build"
psql_shard 1 -qc "delete from acct where id = 5000"
expect_exit 2 shardctl schema status "$M" --format json
assert_eq "$(json_state "$s1")/$(jq -r --arg s "$s1" '.shards[] | select(.shard == $s) | .migrations["V4__lower_email.sql"]' "$STDOUT")" "invalid_index/invalid"
expect_exit 2 shardctl schema apply "$M" --shards "$s1"
expect_stderr_contains "shard $s1 (failed): index public.acct_lower_email on public.acct is INVALID, where V4__lower_email.sql (recorded as applied) creates it"
expect_stderr_contains "DROP INDEX CONCURRENTLY IF EXISTS public.acct_lower_email;"

# --- a history table of the first shape is read as it is and upgraded by apply -------------------
schema_fleet schema_old 1
O="$TEST_TMP/old"
mig "$O" V1__a.sql <<'SQL'
create table a (id int);
SQL
mig "$O" V2__a_id.sql <<'SQL'
-- shardctl:no-transaction
create index concurrently a_id on a (id);
SQL
sum=$(sha256sum < "$O/V1__a.sql" | cut -d' ' -f1)
psql_shard 1 -q <<SQL
create table a (id int);
create schema if not exists shardctl;
create table shardctl.schema_history (
  id bigint generated always as identity primary key, version text, name text not null,
  kind text not null check (kind in ('versioned', 'repeatable', 'baseline')), checksum text,
  applied_at timestamptz not null default now(), duration_ms bigint not null default 0,
  applied_by text not null default current_user, success boolean not null,
  check ((kind = 'repeatable') = (version is null)));
insert into shardctl.schema_history (version, name, kind, checksum, success)
  values ('1', 'V1__a.sql', 'versioned', 'sha256:$sum', true);
SQL
expect_exit 1 shardctl schema status "$O" --format json
assert_eq "$(jq -r '.shards[0].migrations | "\(.["V1__a.sql"]) \(.["V2__a_id.sql"])"' "$STDOUT")" "ok pending"
expect_exit 0 shardctl schema apply "$O"
assert_eq "$(history 1 | tr '\n' ' ')" "V1__a.sql|t V2__a_id.sql|t "
assert_eq "$(shard_value 1 "select string_agg(attname || ':' || attnotnull, ',' order by attnum) from pg_attribute
                            where attrelid = 'shardctl.schema_history'::regclass and attname in ('success', 'note')")" \
  "success:false,note:false"
expect_exit 0 shardctl schema status "$O"
pass
