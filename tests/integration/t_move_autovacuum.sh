# A move that starts while autovacuum works on one of its tables (as it does right after a big
# purge): the write guard's DDL waits long enough for PostgreSQL to cancel the autovacuum, as
# it does for any DDL after deadlock_timeout, instead of giving up after five 1 s lock waits
# (exit 75). The autovacuum here is throttled to hold its lock for over a minute, so a guard
# that never waits past deadlock_timeout fails this test.
source "$(dirname "$0")/lib.sh"

dir="$TEST_TMP/sb"
cleanup() { "$SHARDCTL_BIN/shardctl" sandbox down --dir "$dir" >/dev/null 2>&1 || true; }
trap cleanup EXIT

expect_exit 0 shardctl sandbox up --dir "$dir" --shards 2 --scale 1 -q
eval "$(shardctl sandbox env --dir "$dir")"
src=$(shardctl shard show shard_1 --format json | jq -r .dsn)
psql -XAtq -v ON_ERROR_STOP=1 "$src" -c "ALTER SYSTEM SET autovacuum_naptime = '1s'" -c "SELECT pg_reload_conf()" >/dev/null

read -r lo hi < <(psql -XAt -F ' ' "$src" -c "SELECT min(customer_id), max(customer_id) + 1 FROM customers")
mid=$(((lo + hi) / 2))
# A moving table big enough that a throttled vacuum takes minutes: ~6 MB, ~800 pages, at
# most one page per 100 ms.
psql -XAtq -v ON_ERROR_STOP=1 "$src" >/dev/null <<SQL
CREATE TABLE events (customer_id bigint NOT NULL, seq int NOT NULL, pad text NOT NULL, PRIMARY KEY (customer_id, seq));
INSERT INTO events SELECT c, s, repeat('x', 150) FROM generate_series($lo, $hi - 1) c, generate_series(1, 60) s;
ALTER TABLE events SET (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0,
                        autovacuum_vacuum_insert_threshold = 0, autovacuum_vacuum_insert_scale_factor = 0,
                        autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1);
DELETE FROM events WHERE seq = 60 AND customer_id < $mid;
SQL
psql -XAtq -v ON_ERROR_STOP=1 "$(shardctl shard show shard_2 --format json | jq -r .dsn)" \
  -c "CREATE TABLE events (customer_id bigint NOT NULL, seq int NOT NULL, pad text NOT NULL, PRIMARY KEY (customer_id, seq))"
expect_exit 0 shardctl table add-sharded events --map customers --key customer_id
moving=$(psql -XAt "$src" -c "SELECT count(*) FROM events WHERE customer_id >= $mid")
kept=$(psql -XAt "$src" -c "SELECT count(*) FROM events WHERE customer_id < $mid")

autovacuum_on_events() {
  psql -XAt "$src" -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database() AND query LIKE '%events%'"
}
for _ in $(seq 1 120); do
  [ "$(autovacuum_on_events)" = 1 ] && break
  sleep 0.5
done
[ "$(autovacuum_on_events)" = 1 ] || fail "autovacuum never started on events"

expect_exit 0 shardctl split --map customers --at "$mid" --to shard_2 -y
grep -q "canceling autovacuum task" "$dir"/*.log || fail "the move did not meet the autovacuum it was meant to"

dst=$(shardctl shard show shard_2 --format json | jq -r .dsn)
assert_eq "$(psql -XAt "$dst" -c "SELECT count(*) FROM events WHERE customer_id >= $mid")" "$moving"
assert_eq "$(psql -XAt "$src" -c "SELECT count(*) FROM events WHERE customer_id >= $mid")" "0"
assert_eq "$(psql -XAt "$src" -c "SELECT count(*) FROM events WHERE customer_id < $mid")" "$kept"
pass
