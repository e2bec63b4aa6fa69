# shardctl init: creates the catalog, is a no-op the second time, is safe to run concurrently,
# refuses a catalog newer than the binary, and other commands ask for it when it is missing.
source "$(dirname "$0")/lib.sh"

fresh_database init_t   # a database with no catalog schema yet

expect_exit 64 shardctl shard list
expect_stderr_contains "no shardctl catalog"
expect_stderr_contains "shardctl init"

expect_exit 0 shardctl init
expect_stdout_contains "created catalog schema version 12"
expect_exit 0 shardctl init
expect_stdout_contains "up to date"
expect_exit 0 shardctl init --format json
assert_eq "$(jq -r .changed "$STDOUT")" "false"
assert_eq "$(jq -r .version "$STDOUT")" "12"
version=$(jq -r .version "$STDOUT")

# Concurrent first runs on another empty database: every one exits 0 (shardctl-init(1): "0
# done or already current"; "concurrent runs are safe"), exactly one creates the schema and the
# others find it current, one schema. They provably overlap: a session holds init's advisory
# lock (lib/catalog/init.cpp, lock_class 0x53484344 and lock_init 1 of lib/catalog/locks.hpp)
# until all three wait for it in pg_locks, so none can have finished before another began.
fresh_database init_c
init_lock="locktype = 'advisory' and classid = 1397244740 and objid = 1 and objsubid = 2
           and database = (select oid from pg_database where datname = current_database())"
session_open init_gate "$SHARDCTL_CATALOG"
session_send init_gate "select pg_advisory_lock(1397244740, 1);"
wait_until "the test's session to hold init's lock" \
  sql_true "$SHARDCTL_CATALOG" "select exists (select from pg_locks where $init_lock and granted)"
pids=()
for i in 1 2 3; do
  "$SHARDCTL_BIN/shardctl" init --format json >"$TEST_TMP/init$i.out" 2>"$TEST_TMP/init$i.err" &
  pids+=($!)
done
wait_until "three concurrent inits to wait for init's lock" \
  sql_true "$SHARDCTL_CATALOG" "select count(*) = 3 from pg_locks where $init_lock and not granted"
session_close init_gate
for i in 1 2 3; do
  rc=0
  wait "${pids[$((i - 1))]}" || rc=$?
  [ "$rc" = 0 ] || fail "concurrent init $i exited $rc, want 0: $(cat "$TEST_TMP/init$i.err")"
  [ ! -s "$TEST_TMP/init$i.err" ] || fail "concurrent init $i wrote to stderr: $(cat "$TEST_TMP/init$i.err")"
done
results=$(jq -rs 'map("\(.version) \(.changed) \(.previous_version)") | sort | join(", ")' "$TEST_TMP"/init[123].out)
[ "$results" = "$version false $version, $version false $version, $version true 0" ] ||
  fail "concurrent inits: want one to create version $version and two to find it current (version changed previous), got: $results"
assert_eq "$(psql_catalog -tAc "select count(*) from shardctl.catalog_version")" "1"

# A catalog from the future is refused by init and by every other command.
psql_catalog -c "update shardctl.catalog_version set version = 99" >/dev/null
expect_exit 65 shardctl init
expect_stderr_contains "schema version 99"
expect_stderr_contains "upgrade shardctl"
expect_exit 65 shardctl map list
pass
