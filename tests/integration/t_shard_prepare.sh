# shard add|set --app-dsn (checked and redacted like --dsn) and shard prepare: shardctl's
# shard-side objects installed, upgraded or left alone on each shard, one outcome per shard,
# exit 69 naming the shards that did not answer (man/shardctl-shard.1).
source "$(dirname "$0")/lib.sh"

fresh_fleet shard_prepare --shards 2 --scale 1
guard_version() { psql_shard "$1" -XAtc "select coalesce(obj_description(to_regprocedure('shardctl.guard_hit(bigint,text,text)'), 'pg_proc'), '-')"; }

step "the sandbox's shards are prepared"
current=$(guard_version 1)
[[ "$current" == "shardctl guard "* ]] || fail "sandbox shard 1 has no guard: $current"
assert_eq "$(guard_version 2)" "$current"

step "app DSN"
expect_exit 64 shardctl shard set shard_1 --app-dsn "host=b dbname=x password=s3cret"
expect_stderr_contains "application DSN of shard shard_1 contains a password"
! grep -q s3cret "$STDERR" || fail "the password was printed"
expect_exit 64 shardctl shard add s9 --dsn "host=/nonexistent dbname=x" --app-dsn "postgresql://u:s3cret@b/x"
! grep -q s3cret "$STDERR" "$STDOUT" || fail "the password was printed"
expect_exit 64 shardctl shard show s9
expect_exit 0 shardctl shard set shard_1 --app-dsn "host=bouncer port=6432 dbname=shard_1"
expect_exit 0 shardctl shard show shard_1 --format json
assert_eq "$(jq -r .app_dsn "$STDOUT")" "dbname=shard_1 host=bouncer port=6432"
expect_exit 0 shardctl shard list
expect_stdout_contains "dbname=shard_1 host=bouncer port=6432"
expect_exit 0 shardctl shard set shard_1 --app-dsn '' --dry-run
expect_stdout_contains "would remove the application DSN of shard shard_1"
expect_exit 0 shardctl shard set shard_1 --app-dsn ''
assert_eq "$(shardctl shard show shard_1 --format json | jq -r .app_dsn)" null

step "prepare"
psql_shard 1 -qc "drop schema shardctl cascade"
psql_shard 2 -qc "comment on function shardctl.guard_hit(bigint, text, text) is 'shardctl guard 0000000000000000'"
expect_exit 0 shardctl shard prepare --dry-run
expect_stdout_contains "$(shard_name 1)	would install"
expect_stdout_contains "$(shard_name 2)	would upgrade"
assert_eq "$(guard_version 1)" "-"
expect_exit 0 shardctl shard prepare --parallel 2
expect_stdout_contains "$(shard_name 1)	installed"
expect_stdout_contains "$(shard_name 2)	upgraded"
assert_eq "$(guard_version 1)" "$current"
assert_eq "$(guard_version 2)" "$current"
expect_exit 0 shardctl shard prepare "$(shard_name 1)" --format json
assert_eq "$(jq -r '.shards | map(.shard + ":" + .change) | join(",")' "$STDOUT")" "$(shard_name 1):current"
expect_exit 64 shardctl shard prepare nosuch

step "a shard that does not answer"
expect_exit 0 shardctl shard add gone --dsn "host=/nonexistent dbname=gone"
expect_stderr_contains "shard gone not prepared"
expect_exit 69 shardctl shard prepare --connect-timeout 2
expect_stderr_contains "1 shard(s) did not answer: gone"
expect_stdout_contains "$(shard_name 1)	up to date"
expect_stdout_contains "gone	unreachable"
pass
