# The documented reset after `eval "$(shardctl sandbox env)"`: `sandbox down && sandbox up`
# works although $SHARDCTL_CONFIG names the config file `down` removed, and the exported
# environment is valid again afterwards. Any other missing config file is still refused.
source "$(dirname "$0")/lib.sh"

dir="$TEST_TMP/sb"
cleanup() { "$SHARDCTL_BIN/shardctl" sandbox down --dir "$dir" >/dev/null 2>&1 || true; }
trap cleanup EXIT

expect_exit 0 shardctl sandbox up --dir "$dir" --shards 2 --scale 0
eval "$(shardctl sandbox env --dir "$dir")"
assert_eq "$SHARDCTL_CONFIG" "$dir/shardctl.toml"
expect_exit 0 shardctl shard list

expect_exit 0 shardctl sandbox down
[ ! -e "$dir" ] || fail "down left $dir"
expect_exit 0 shardctl sandbox status
expect_stdout_contains "no sandbox in $dir"
expect_exit 0 shardctl sandbox up --shards 2 --scale 0
expect_stdout_contains "created $dir"
# The exported environment works again, unchanged.
expect_exit 0 shardctl shard list
expect_stdout_contains "shard_2"
[ "$(psql -X -Atc 'select count(*) from shardctl.shards')" = 2 ] || fail "psql via the old sandbox env"

# A missing config that is not the sandbox's own is still an error, for the sandbox family too.
SHARDCTL_CONFIG="$TEST_TMP/nosuch.toml" expect_exit 64 shardctl sandbox status
expect_stderr_contains "does not exist"
# Other families keep refusing the sandbox's removed config: their catalog is gone with it.
expect_exit 0 shardctl sandbox down
expect_exit 64 shardctl shard list
expect_stderr_contains "$dir/shardctl.toml does not exist"
pass
