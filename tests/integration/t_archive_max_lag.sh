# --max-lag against a real streaming replica: a primary cluster made for this test holds the
# shard, a standby replicates it, and its replay is paused so pg_stat_replication.replay_lag
# grows. An archive run with --max-lag 1s waits (and says so) instead of archiving; once replay
# resumes and the replica catches up, the same run finishes.
source "$(dirname "$0")/lib.sh"

PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
# The servers run as the user the fixture's clusters run as (root may not run them).
owner=$(stat -c %U "$SHARDCTL_TEST_SANDBOX/catalog")
as_owner() { if [ "$(id -un)" = "$owner" ]; then "$@"; else runuser -u "$owner" -- "$@"; fi; }
D=$(mktemp -d /tmp/shardctl-lag.XXXXXX)
chmod 755 "$D"
[ "$(id -un)" = "$owner" ] || chown "$owner" "$D"
P=$((6450 + $$ % 40))
cleanup() {
  as_owner "$PGBIN/pg_ctl" -D "$D/standby" -m immediate stop >/dev/null 2>&1 || true
  as_owner "$PGBIN/pg_ctl" -D "$D/primary" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$D"
}
trap cleanup EXIT
as_owner "$PGBIN/initdb" -D "$D/primary" -A trust -U postgres >/dev/null
as_owner "$PGBIN/pg_ctl" -D "$D/primary" -l "$D/primary.log" -w \
  -o "-p $P -k $D -c listen_addresses='' -c fsync=off" start >/dev/null
as_owner "$PGBIN/pg_basebackup" -D "$D/standby" -R -h "$D" -p "$P" -U postgres
as_owner "$PGBIN/pg_ctl" -D "$D/standby" -l "$D/standby.log" -w \
  -o "-p $((P + 1)) -k $D -c listen_addresses='' -c wal_receiver_status_interval=1s -c fsync=off" start >/dev/null
PRIMARY="host=$D port=$P user=postgres dbname=postgres"
STANDBY="host=$D port=$((P + 1)) user=postgres dbname=postgres"

fresh_fleet archlag --empty
expect_exit 0 shardctl shard add lagshard --dsn "$PRIMARY"
psql -X -q "$PRIMARY" -c "create table events (id bigint primary key, at date not null)" \
  -c "insert into events select g, date '2024-01-01' + g % 300 from generate_series(1, 500) g"

# Replay paused, then new WAL: the replica falls behind and its replay lag grows.
psql -X -q "$PRIMARY" -c "create table filler (x int)"
psql -X -q "$STANDBY" -c "select pg_wal_replay_pause()" >/dev/null
for _ in $(seq 1 30); do
  psql -X -q "$PRIMARY" -c "insert into filler values (1)"
  lag=$(psql -X -At "$PRIMARY" -c "select coalesce(extract(epoch from max(replay_lag)), 0) from pg_stat_replication")
  awk -v l="$lag" 'BEGIN { exit !(l > 2) }' && break
  sleep 0.5
done
awk -v l="$lag" 'BEGIN { exit !(l > 2) }' || fail "the replica's replay lag never grew (last: $lag)"

"$SHARDCTL_BIN/shardctl" archive run --table events --where "at < '2024-06-01'" --to "dir:$TEST_TMP/arch" \
  --max-lag 1s --batch-size 50 >"$TEST_TMP/run.out" 2>&1 &
pid=$!
for _ in $(seq 1 40); do grep -q "replica replays" "$TEST_TMP/run.out" && break; sleep 0.5; done
sleep 1
grep -q "replica replays" "$TEST_TMP/run.out" || fail "the run did not say it waits for the replica: $(cat "$TEST_TMP/run.out")"
kill -0 "$pid" 2>/dev/null || fail "the run did not wait: $(cat "$TEST_TMP/run.out")"
assert_eq "$(psql -X -At "$PRIMARY" -c "select count(*) from events")" "500"
psql -X -q "$STANDBY" -c "select pg_wal_replay_resume()" >/dev/null
wait "$pid" || fail "the run failed: $(cat "$TEST_TMP/run.out")"
cold=$(psql -X -At "$PRIMARY" -c "select count(*) from events where at < '2024-06-01'")
assert_eq "$cold" "0"
pass
