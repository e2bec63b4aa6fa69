# Bytes that are not UTF-8 are a usage error (64) naming the argument, wherever they enter:
# names, keys on the command line and on stdin, DSNs (not echoed). Never exit 70.
source "$(dirname "$0")/lib.sh"

fresh_fleet enc --empty
shardctl shard add s1 --dsn "dbname=one" >/dev/null
shardctl map create tenants --kind list --key-type text >/dev/null
shardctl map create big --kind range --key-type bigint >/dev/null
shardctl map create th --kind hash --key-type text --shards s1 >/dev/null
shardctl mapping add --map tenants --point acme --shard s1 >/dev/null
before=$(catalog_dump)

ff=$'\xff'
expect_exit 64 shardctl map show "$ff"
expect_stderr_contains "argument NAME '\\xFF' is not valid UTF-8"
expect_exit 64 shardctl shard show "a${ff}b"
expect_exit 64 shardctl shard add "s$ff" --dsn dbname=x --dry-run
expect_exit 64 shardctl mapping add --map "$ff" --point x --shard s1
expect_stderr_contains "option --map '\\xFF'"
expect_exit 64 shardctl mapping add --map tenants --point $'caf\xe9' --shard s1
expect_exit 64 shardctl mapping list --map $'\xc3\x28'
expect_exit 64 shardctl table add-reference $'\xed\xa0\x80'   # a UTF-16 surrogate
expect_exit 64 shardctl xref remove $'\xc0\xaf'               # an overlong '/'
expect_exit 64 shardctl op show "$ff"
expect_exit 64 shardctl shard add s2 --dsn "dbname=x$ff password=hidden"
expect_stderr_contains "option --dsn is not valid UTF-8"
! grep -q hidden "$STDERR" || fail "DSN echoed"

for fmt in text json; do
  for map in tenants th; do
    expect_exit 64 shardctl lookup --format "$fmt" --map "$map" acme "$ff"
    expect_stderr_contains "is not valid UTF-8"
    printf 'acme\nb\xffc\nzed\n' > "$TEST_TMP/keys"
    expect_exit 64 sh -c "'$SHARDCTL_BIN/shardctl' lookup --format $fmt --map $map - < '$TEST_TMP/keys'"
    expect_stderr_contains "stdin:2: text key 'b\\xFFc' is not valid UTF-8"
  done
done
# Valid multi-byte keys route as before.
expect_exit 0 shardctl lookup --format json --map th 'ünïcødé' '日本'
assert_eq "$(jq -r '.results[1].key' "$STDOUT")" '日本'

# A bigint map refuses the bytes as a bad key, shown escaped on one line.
printf '1\n\xff\n' > "$TEST_TMP/keys"
expect_exit 64 sh -c "'$SHARDCTL_BIN/shardctl' lookup --map big - < '$TEST_TMP/keys'"
expect_stderr_contains "stdin:2: '\\xFF' is not a valid bigint key"

# A config path may hold any bytes (it is the file system's business).
cp /dev/null "$TEST_TMP/c$ff.toml"
expect_exit 0 shardctl -c "$TEST_TMP/c$ff.toml" map list

assert_eq "$(catalog_dump)" "$before"
pass
