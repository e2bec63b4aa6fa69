# The dispatcher: lists families (plugins on PATH too), passes global options through in
# either position, rejects unknown commands and options with exit 64.
source "$(dirname "$0")/lib.sh"

expect_exit 0 shardctl --help
for f in init sandbox shard map mapping lookup table xref; do expect_stdout_contains "  $f "; done
expect_exit 0 shardctl --version
expect_stdout_contains "shardctl "

# A plugin on PATH becomes a command.
mkdir -p "$TEST_TMP/plugins"
printf '#!/bin/sh\necho "hello from plugin: $*"\n' > "$TEST_TMP/plugins/shardctl-hello"
chmod +x "$TEST_TMP/plugins/shardctl-hello"
PATH="$TEST_TMP/plugins:$PATH" expect_exit 0 shardctl --help
expect_stdout_contains "hello"
PATH="$TEST_TMP/plugins:$PATH" expect_exit 0 shardctl hello a b
expect_stdout_contains "hello from plugin: a b"

expect_exit 64 shardctl nosuchfamily
expect_stderr_contains "unknown command 'nosuchfamily'"
expect_exit 64 shardctl --bogus
expect_exit 64 shardctl shard
expect_exit 64 shardctl shard frob
expect_exit 0 shardctl shard --help
expect_stdout_contains "add"

# Global options before the family or after the command.
fresh_fleet disp --empty
shardctl shard add s1 --dsn "dbname=x" >/dev/null
expect_exit 0 shardctl --format json shard list
assert_eq "$(jq -r '.shards[0].name' "$STDOUT")" "s1"
expect_exit 0 shardctl shard list --format json
assert_eq "$(jq -r '.shards[0].name' "$STDOUT")" "s1"
expect_exit 64 shardctl shard list --format yaml

# help shows a manual page (or the command's --help where no page exists).
expect_exit 0 shardctl help shard
expect_stdout_contains "shard"
pass
