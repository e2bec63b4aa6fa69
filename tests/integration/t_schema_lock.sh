# The per-shard rollout lock: a session holding it makes apply exit 75 naming the holder; two
# applies started together: the second gets 75 naming the first; a waiting apply does not block
# the first one's CREATE INDEX CONCURRENTLY (its lock wait is never inside a transaction); a
# migration whose table lock wait exceeds --lock-timeout is `locked` (75) and records no
# failure. Each case converges on a re-run. (shardctl-schema(1), "The rollout lock".)
# Every holder is a session the test keeps open for as long as the case needs (session_open,
# lib.sh), and a first apply is held inside a migration by a gate, an advisory lock the test
# holds: no case depends on a sleep being long enough. That a command gives up instead of
# waiting is shown by its return while the holder still holds (under a hang guard).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_lock 4
s1=$(shard_name 1) s2=$(shard_name 2) s3=$(shard_name 3)
M="$TEST_TMP/migrations"
mig "$M" V1__t.sql <<'SQL'
create table t (id int primary key, v text);
insert into t select g, g::text from generate_series(1, 2000) g;
SQL

# wait_for CASE N SQL: until the query on shard N returns t.
wait_for() { wait_until "$1: $3" sql_true "$(shard_dsn "$2")" "$3"; }
lock_held_by() {  # lock_held_by APP: this shard's rollout lock is held by application APP
  echo "select exists (select from pg_locks l join pg_stat_activity a using (pid) where l.locktype = 'advisory'
          and l.classid = 1397244740 and l.objid = 1396918349 and l.granted and a.application_name = '$1')"
}
# The gate: a migration's `select pg_advisory_xact_lock(4242, 1)` waits while the test's session
# gate holds that lock on the shard (the first apply runs with --lock-timeout 1h, the
# lock_timeout of its migrations, so that it waits as long as the case takes).
gate_waited() {  # gate_waited: SQL, true while a migration waits at the gate
  echo "select exists (select from pg_locks where locktype = 'advisory' and classid = 4242 and objid = 1
          and objsubid = 2 and not granted)"
}

# --- a session holds shard 2's rollout lock ---------------------------------------------------
session_open holder_psql "$(shard_dsn 2)"
session_send holder_psql "select pg_advisory_lock(1397244740, 1396918349);"
wait_for "held lock" 2 "$(lock_held_by holder_psql)"
expect_exit_guarded 75 shardctl schema apply "$M" --parallel 1 --lock-timeout 500ms --format json
assert_eq "$(json_state "$s1")/$(json_state "$s2")/$(json_state "$s3")" "ok/locked/skipped"
expect_stderr_contains "the schema rollout lock of shard $s2 is held by pid $(session_pid holder_psql) "
expect_stderr_contains "(application_name holder_psql, client local, user postgres, connected since "
assert_eq "$(history 2)" ""
session_close holder_psql
expect_exit 0 shardctl schema apply "$M"
expect_stdout_contains "4 shard(s): 4 ok"

# --- two applies together: the second finds the first's lock (application_name shardctl schema)
mig "$M" V2__slow.sql <<'SQL'
select pg_advisory_xact_lock(4242, 1);
alter table t add column w int;
SQL
session_open gate "$(shard_dsn 1)"
session_send gate "select pg_advisory_lock(4242, 1);"
shardctl schema apply "$M" --parallel 4 --lock-timeout 1h > "$TEST_TMP/first.out" 2>&1 &
first=$!
wait_for "two applies" 1 "$(gate_waited)"
wait_for "two applies" 1 "$(lock_held_by 'shardctl schema')"
expect_exit_guarded 75 shardctl schema apply "$M" --lock-timeout 300ms
expect_stderr_contains "the schema rollout lock of shard $s1 is held by pid "
expect_stderr_contains "application_name shardctl schema"
session_send gate "select pg_advisory_unlock(4242, 1);"
wait "$first" || fail "two applies: the first apply failed: $(cat "$TEST_TMP/first.out")"
expect_exit 0 shardctl schema apply "$M" --format json
assert_eq "$(jq -r '[.shards[].applied | length] | add' "$STDOUT")" 0

# --- a second apply that waits for the lock does not hold up the first one's CONCURRENTLY build
# CREATE INDEX CONCURRENTLY waits for every transaction open when it starts: had the second
# apply's lock wait sat inside one, the first would wait for the second, which would give up
# after its --lock-timeout with 75. The first is held at the gate, the second seen polling for
# the lock outside any transaction, then the gate opens: both must succeed.
mig "$M" V3__index.sql <<'SQL'
-- shardctl:no-transaction
select pg_advisory_xact_lock(4242, 1);
create index concurrently t_v on t (v);
SQL
session_send gate "select pg_advisory_lock(4242, 1);"
shardctl schema apply "$M" --shards "$s1" --lock-timeout 1h > "$TEST_TMP/first.out" 2>&1 &
first=$!
wait_for "concurrently" 1 "$(gate_waited)"
first_pids=$(shard_value 1 "select string_agg(pid::text, ',') from pg_stat_activity where application_name = 'shardctl schema'")
shardctl schema apply "$M" --shards "$s1" --lock-timeout 30s > "$TEST_TMP/second.out" 2>&1 &
second=$!
wait_for "concurrently" 1 "select exists (select from pg_stat_activity where application_name = 'shardctl schema'
                           and pid not in ($first_pids) and query like 'SELECT pg_try_advisory_lock(%')"
in_xact=$(shard_value 1 "select count(*) from pg_stat_activity where application_name = 'shardctl schema'
                          and pid not in ($first_pids) and state like 'idle in transaction%'")
[ "$in_xact" = 0 ] || fail "concurrently: the waiting apply keeps a transaction open ($in_xact session(s) idle in transaction)"
session_send gate "select pg_advisory_unlock(4242, 1);"
wait "$first" || fail "concurrently: the first apply failed: $(cat "$TEST_TMP/first.out")"
rc=0
wait "$second" || rc=$?
[ "$rc" = 0 ] || fail "concurrently: the second apply exited $rc (75: the first one's CREATE INDEX CONCURRENTLY waited for it): $(cat "$TEST_TMP/second.out")"
session_close gate
assert_eq "$(shard_value 1 "select indisvalid from pg_index where indexrelid = 't_v'::regclass")" t
expect_exit 0 shardctl schema apply "$M"

# --- a migration waiting for a table lock longer than --lock-timeout: locked (75), nothing recorded
mig "$M" V4__alter.sql <<'SQL'
alter table t add column x int;
SQL
session_open holder_table "$(shard_dsn 1)"
session_send holder_table "begin; lock table t in access share mode;"
wait_for "table lock" 1 "select exists (select from pg_locks l join pg_stat_activity a using (pid)
                         where a.application_name = 'holder_table' and l.relation = 't'::regclass and l.granted)"
expect_exit_guarded 75 shardctl schema apply "$M" --shards "$s1" --lock-timeout 300ms --format json
assert_eq "$(json_state "$s1")" locked
assert_eq "$(jq -r '.shards[0].error' "$STDOUT")" "V4__alter.sql: canceling statement due to lock timeout"
assert_eq "$(shard_value 1 "select count(*) from shardctl.schema_history where name = 'V4__alter.sql'")" 0
session_close holder_table
expect_exit 0 shardctl schema apply "$M"
expect_exit 0 shardctl schema status "$M"
pass
