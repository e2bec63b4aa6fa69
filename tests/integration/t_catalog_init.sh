# shardctl init: creates the catalog, is a no-op the second time, is safe to run concurrently,
# refuses a catalog newer than the binary, and other commands ask for it when it is missing.
source "$(dirname "$0")/lib.sh"

fresh_database init_t   # a database with no catalog schema yet

expect_exit 64 shardctl shard list
expect_stderr_contains "no shardctl catalog"
expect_stderr_contains "shardctl init"

expect_exit 0 shardctl init
expect_stdout_contains "created catalog schema version 7"
expect_exit 0 shardctl init
expect_stdout_contains "up to date"
expect_exit 0 shardctl init --format json
assert_eq "$(jq -r .changed "$STDOUT")" "false"
assert_eq "$(jq -r .version "$STDOUT")" "7"

# Concurrent first runs on another empty database: both succeed, one schema.
fresh_database init_c
for i in 1 2 3; do shardctl init >/dev/null 2>"$TEST_TMP/init$i.err" & done
wait
assert_eq "$(psql_catalog -tAc "select count(*) from shardctl.catalog_version")" "1"

# A catalog from the future is refused by init and by every other command.
psql_catalog -c "update shardctl.catalog_version set version = 99" >/dev/null
expect_exit 65 shardctl init
expect_stderr_contains "schema version 99"
expect_stderr_contains "upgrade shardctl"
expect_exit 65 shardctl map list
pass
