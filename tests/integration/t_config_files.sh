# A config is a small regular file: anything else is refused (65) at once, never read to the end
# or hung on; every value error is 65 with file:line:col and the key's name.
source "$(dirname "$0")/lib.sh"

t0=$(date +%s)
expect_exit 65 timeout 20 "$SHARDCTL_BIN/shardctl" -c /dev/zero shard list
expect_stderr_contains "config file /dev/zero is not a regular file"
expect_exit 65 shardctl -c "$TEST_TMP" shard list
expect_stderr_contains "is not a regular file"
mkfifo "$TEST_TMP/fifo"
expect_exit 65 timeout 20 "$SHARDCTL_BIN/shardctl" -c "$TEST_TMP/fifo" shard list
head -c 2000000 /dev/zero | tr '\0' '#' > "$TEST_TMP/huge.toml"
expect_exit 65 shardctl -c "$TEST_TMP/huge.toml" shard list
expect_stderr_contains "is 2000000 bytes; the limit for config files is 1048576 bytes (1 MiB)"
[ $(($(date +%s) - t0)) -lt 20 ] || fail "config refusals took too long"

bad_dsn() {  # bad_dsn TOML-VALUE EXPECTED-MESSAGE
  printf 'catalog = %s\n' "$1" > "$TEST_TMP/bad.toml"
  expect_exit 65 shardctl -c "$TEST_TMP/bad.toml" shard list
  expect_stderr_contains "bad.toml:1:11: \"catalog\" $2"
}
bad_dsn '"host=x port=abc"' "has an invalid port"
bad_dsn "\"host=x 'unterminated\"" "is not a valid connection string"
bad_dsn '"just-a-word"' "is not a valid connection string"
bad_dsn '"host=x nosuchoption=1"' 'is not a valid connection string: invalid connection option "nosuchoption"'
bad_dsn '"postgresql://h:99999/db"' "has an invalid port"

# An empty regular file is a valid config (all defaults).
: > "$TEST_TMP/empty.toml"
expect_exit 64 shardctl -c "$TEST_TMP/empty.toml" shard list
expect_stderr_contains "no catalog connection string"

# sandbox --dir '' is a usage error, not a crash.
for cmd in env status down up fleet; do
  args=(sandbox "$cmd" --dir '')
  [ "$cmd" = fleet ] && args+=(x)
  expect_exit 64 shardctl "${args[@]}" --dry-run
  expect_stderr_contains "--dir must name a directory"
done
expect_exit 64 shardctl sandbox env --dir ''
pass
