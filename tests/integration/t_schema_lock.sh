# The per-shard rollout lock: a session holding it makes apply exit 75 naming the holder; two
# applies started together: the second gets 75 naming the first; a waiting apply does not block
# the first one's CREATE INDEX CONCURRENTLY (its lock wait is never inside a transaction); a
# migration whose table lock wait exceeds --lock-timeout is `locked` (75) and records no
# failure. Each case converges on a re-run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_lock 4
s1=$(shard_name 1) s2=$(shard_name 2) s3=$(shard_name 3)
M="$TEST_TMP/migrations"
mig "$M" V1__t.sql <<'SQL'
create table t (id int primary key, v text);
insert into t select g, g::text from generate_series(1, 2000) g;
SQL

holders=()
cleanup() {
  for n in 1 2; do psql_shard "$n" -qAtc "select pg_terminate_backend(pid) from pg_stat_activity where application_name like 'holder_%'" >/dev/null 2>&1 || true; done
  for p in "${holders[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
# wait_for N SQL: until the query on shard N returns t (at most 10 s).
wait_for() {
  for _ in $(seq 1 200); do [ "$(shard_value "$1" "$2")" = t ] && return 0; sleep 0.05; done
  fail "timed out waiting for: $2"
}
lock_held_by() {  # lock_held_by N APP: the rollout lock of shard N is held by application APP
  echo "select exists (select from pg_locks l join pg_stat_activity a using (pid) where l.locktype = 'advisory'
          and l.classid = 1397244740 and l.objid = 1396918349 and l.granted and a.application_name = '$2')"
}

# A psql session holds shard 2's rollout lock.
psql -X -q "$(shard_dsn 2) application_name=holder_psql" -c "select pg_advisory_lock(1397244740, 1396918349)" -c "select pg_sleep(60)" >/dev/null 2>&1 &
holders+=($!)
wait_for 2 "$(lock_held_by 2 holder_psql)"
t0=$(date +%s%N)
expect_exit 75 shardctl schema apply "$M" --parallel 1 --lock-timeout 500ms --format json
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 5000 ] || fail "the lock wait took $ms ms with --lock-timeout 500ms"
assert_eq "$(json_state "$s1")/$(json_state "$s2")/$(json_state "$s3")" "ok/locked/skipped"
expect_stderr_contains "the schema rollout lock of shard $s2 is held by pid "
expect_stderr_contains "(application_name holder_psql, client local, user postgres, connected since "
assert_eq "$(history 2)" ""
cleanup
holders=()
expect_exit 0 shardctl schema apply "$M"
expect_stdout_contains "4 shard(s): 4 ok"

# Two applies together: the second finds the first's lock (application_name shardctl schema).
mig "$M" V2__slow.sql <<'SQL'
select pg_sleep(2);
alter table t add column w int;
SQL
shardctl schema apply "$M" --parallel 4 > "$TEST_TMP/first.out" 2>&1 &
first=$!
wait_for 1 "$(lock_held_by 1 'shardctl schema')"
expect_exit 75 shardctl schema apply "$M" --lock-timeout 300ms
expect_stderr_contains "the schema rollout lock of shard $s1 is held by pid "
expect_stderr_contains "application_name shardctl schema"
wait "$first" || fail "the first apply failed: $(cat "$TEST_TMP/first.out")"
expect_exit 0 shardctl schema apply "$M" --format json
assert_eq "$(jq -r '[.shards[].applied | length] | add' "$STDOUT")" 0

# A second apply that waits for the lock does not hold up the first one's CONCURRENTLY build:
# the first finishes long before the second's --lock-timeout.
mig "$M" V3__index.sql <<'SQL'
-- shardctl:no-transaction
select pg_sleep(1);
create index concurrently t_v on t (v);
SQL
t0=$(date +%s%N)
shardctl schema apply "$M" --shards "$s1" > "$TEST_TMP/first.out" 2>&1 &
first=$!
wait_for 1 "$(lock_held_by 1 'shardctl schema')"
shardctl schema apply "$M" --shards "$s1" --lock-timeout 30s > "$TEST_TMP/second.out" 2>&1 &
second=$!
wait "$first" || fail "the first apply failed: $(cat "$TEST_TMP/first.out")"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 15000 ] || fail "CREATE INDEX CONCURRENTLY waited for the second apply ($ms ms)"
wait "$second" || fail "the second apply failed: $(cat "$TEST_TMP/second.out")"
assert_eq "$(shard_value 1 "select indisvalid from pg_index where indexrelid = 't_v'::regclass")" t
expect_exit 0 shardctl schema apply "$M"

# A migration waiting for a table lock longer than --lock-timeout: locked (75), nothing recorded.
mig "$M" V4__alter.sql <<'SQL'
alter table t add column x int;
SQL
psql -X -q "$(shard_dsn 1) application_name=holder_table" -c "begin; lock table t in access share mode; select pg_sleep(60);" >/dev/null 2>&1 &
holders+=($!)
wait_for 1 "select exists (select from pg_stat_activity where application_name = 'holder_table' and wait_event = 'PgSleep')"
expect_exit 75 shardctl schema apply "$M" --shards "$s1" --lock-timeout 300ms --format json
assert_eq "$(json_state "$s1")" locked
assert_eq "$(jq -r '.shards[0].error' "$STDOUT")" "V4__alter.sql: canceling statement due to lock timeout"
assert_eq "$(shard_value 1 "select count(*) from shardctl.schema_history where name = 'V4__alter.sql'")" 0
cleanup
holders=()
expect_exit 0 shardctl schema apply "$M"
expect_exit 0 shardctl schema status "$M"
pass
