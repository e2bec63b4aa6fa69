# The catalog DSN and the config file are found in the order shardctl(1) gives (FILES) through the real binary.
source "$(dirname "$0")/lib.sh"

fresh_fleet cfg --empty
dsn=$SHARDCTL_CATALOG
shardctl shard add s1 --dsn "dbname=x" >/dev/null
unset SHARDCTL_CATALOG

expect_exit 64 shardctl shard list
expect_stderr_contains "no catalog connection string"
expect_stderr_contains "sandbox up"

printf 'catalog = "%s"\n' "$dsn" > "$TEST_TMP/shardctl.toml"
expect_exit 0 shardctl shard list
expect_stdout_contains "s1"

# --catalog beats $SHARDCTL_CATALOG beats the file.
SHARDCTL_CATALOG="host=$TEST_TMP/nowhere dbname=x" expect_exit 69 shardctl shard list
SHARDCTL_CATALOG="host=$TEST_TMP/nowhere dbname=x" expect_exit 0 shardctl --catalog "$dsn" shard list

# $SHARDCTL_CATALOG ... and --config beats ./shardctl.toml.
printf 'catalog = "host=%s/nowhere dbname=x"\n' "$TEST_TMP" > "$TEST_TMP/other.toml"
expect_exit 69 shardctl -c "$TEST_TMP/other.toml" shard list
SHARDCTL_CONFIG="$TEST_TMP/other.toml" expect_exit 69 shardctl shard list
expect_exit 64 shardctl -c "$TEST_TMP/missing.toml" shard list
expect_stderr_contains "missing.toml does not exist"

# XDG config when nothing else is there.
rm "$TEST_TMP/shardctl.toml"
mkdir -p "$XDG_CONFIG_HOME/shardctl"
printf 'catalog = "%s"\n' "$dsn" > "$XDG_CONFIG_HOME/shardctl/config.toml"
expect_exit 0 shardctl shard list
expect_stdout_contains "s1"
printf 'catalog = "%s"\n[defaults]\nparallel = "four"\n' "$dsn" > "$XDG_CONFIG_HOME/shardctl/config.toml"
expect_exit 65 shardctl shard list
expect_stderr_contains "config.toml:3:12"
pass
