# The Python client behind a real PgBouncer 1.18 (transaction pooling, default_pool_size 1:
# two clients share one server connection), with the shards' app_dsn pointing at it
# (clients/python/itests/pgbouncer_check.py). Shows: the client works through it (no named
# prepared statements); a version stated with set_config(..., true) lasts for its transaction
# only, so a stale one is refused in that transaction and the next client of the same server
# connection, stating nothing, is not; and the negative control: a session-level SET leaks to
# the next client of the server connection (read back with current_setting), which is why the
# client states the version per transaction. The refusals need the shard side of the routing
# contract (route floors); without it those assertions are reported as not run (skip).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/client_lib.sh"

fresh_fleet pgb --shards 4 --scale 1
trap 's=$?; pgbouncer_stop; (exit $s); _drop_made_databases' EXIT
step "pgbouncer"
pgbouncer_start "$TEST_TMP/pgb" 6432
for i in 1 2 3 4; do set_app_dsn "shard_$i" "$PGB_DSN_PREFIX dbname=shard_$i"; done
# route() hands out the app DSN (PgBouncer's), as the catalog keeps it.
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.route('customers', 300::bigint) r, shardctl.shards s
                                 where s.name = 'shard_2' and r.dsn = s.app_dsn and s.app_dsn like '%host=$TEST_TMP/pgb%'")" 1

step "split 400..501 off shard_2 (raises its route floor)"
old=$(psql_catalog -XAtc "select version from shardctl.maps where name = 'customers'")
expect_exit 0 shardctl split --map customers --at 400 --to shard_4 --batch-size 1000
assert_eq "$(shardctl lookup --map customers 300 450 | cut -f2 | tr '\n' ' ')" "shard_2 shard_4 "
shardside=0
shardside_present 2 && shardside=1

step "client through pgbouncer"
OLD_VERSION=$old SHARDSIDE=$shardside PGB_DSN_PREFIX=$PGB_DSN_PREFIX \
  client_py "$CLIENT_DIR/itests/pgbouncer_check.py" > "$TEST_TMP/pgb.out" 2>&1 ||
  { cat "$TEST_TMP/pgb.out" >&2; tail -20 "$TEST_TMP/pgb/pgbouncer.log" >&2; fail "pgbouncer_check.py failed (above)"; }
grep -v '^# PENDING' "$TEST_TMP/pgb.out"
grep -q '^# pgbouncer_check: ok$' "$TEST_TMP/pgb.out" || fail "pgbouncer_check.py did not finish"
# PgBouncer held one server connection per shard database it served (default_pool_size 1).
servers=$(psql -X -At "$PGB_DSN_PREFIX dbname=pgbouncer" -c "show servers" | awk -F'|' '{print $3}' | sort | uniq -c | awk '$1 > 1')
[ -z "$servers" ] || fail "more than one server connection to a database: $servers"
while IFS= read -r line; do contract_pending "${line#\# PENDING: }"; done < <(grep '^# PENDING' "$TEST_TMP/pgb.out")
client_done
