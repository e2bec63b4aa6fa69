# Bad input changes nothing: each case gives the exit code shardctl(1) gives, one error line on stderr
# naming what and where, and leaves the catalog byte-for-byte as it was.
source "$(dirname "$0")/lib.sh"

fresh_fleet bad --empty
shardctl shard add s1 --dsn "dbname=one" >/dev/null
shardctl shard add s2 --dsn "dbname=two" >/dev/null
shardctl map create big --kind range --key-type bigint >/dev/null
shardctl map create ids --kind list --key-type uuid >/dev/null
shardctl mapping add --map big --range 0..100 --shard s1 >/dev/null
before=$(catalog_dump)

one_error_line() {  # the error is one line (plus at most one hint line)
  local n; n=$(grep -c '^shardctl .*error: ' "$STDERR" || true)
  assert_eq "$n" "1"
  local other; other=$({ grep -v -e '^shardctl .*error: ' -e '^hint: ' "$STDERR" || true; } | wc -l)
  [ "$other" -eq 0 ] || fail "stray stderr lines: $(cat "$STDERR")"
}

expect_exit 64 shardctl shard list --no-such-flag
one_error_line
expect_stderr_contains "--no-such-flag"

# Counts: one readable line naming the option and what it takes (CLI11's own numeric checks
# printed the whole double range).
for args in "query select1 --parallel 0" "check --sample -1" "schema status --parallel x" \
            "stats collect --connect-timeout 1.5" "split --map big --at 5 --to s1 --parallel 65"; do
  read -ra argv <<<"$args"
  expect_exit 64 shardctl "${argv[@]}"
  one_error_line
  expect_stderr_contains "is not a whole number"
  ! grep -q "0000000" "$STDERR" || fail "the refusal of '$args' prints a range no one typed: $(cat "$STDERR")"
done
expect_stderr_contains "from 1 to 64"

expect_exit 64 shardctl frobnicate
expect_stderr_contains "unknown command 'frobnicate'"

expect_exit 64 shardctl lookup --map big abc
one_error_line
expect_stderr_contains "'abc' is not a valid bigint key"
expect_exit 64 shardctl mapping add --map big --range 1x..5 --shard s1
one_error_line
expect_exit 64 shardctl mapping add --map ids --point 1234-not-a-uuid --shard s1
one_error_line
expect_stderr_contains "uuid"
expect_exit 64 shardctl lookup --map ids 0b1e7c53-8f7e-4bd5-9d51-3b7e0e3d2a1
expect_stderr_contains "uuid"

expect_exit 64 shardctl mapping add --map big --shard s2
one_error_line
expect_stderr_contains "--point or --range"
expect_exit 64 shardctl mapping remove --map big
expect_stderr_contains "--point or --range"

expect_exit 64 shardctl mapping add --map big --range 10..5 --shard s2
one_error_line
expect_stderr_contains "10..5"
expect_exit 64 shardctl mapping add --map big --range 50..150 --shard s2
one_error_line
expect_stderr_contains "overlaps mapping 0..100 -> s1"

expect_exit 64 shardctl mapping add --map nosuch --range 1..2 --shard s1
expect_stderr_contains "unknown map 'nosuch'"
expect_exit 64 shardctl mapping add --map big --range 200..300 --shard nosuch
expect_stderr_contains "unknown shard 'nosuch'"
expect_exit 64 shardctl lookup --map nosuch 1
expect_exit 64 shardctl table add-sharded t --map nosuch --key k
expect_exit 64 shardctl map create bad --kind tree --key-type int
expect_exit 64 shardctl map create bad --kind list --key-type float

# Streaming: the bad key is named with its line.
printf '1\n2\nnope\n3\n' > "$TEST_TMP/keys"
expect_exit 64 sh -c "'$SHARDCTL_BIN/shardctl' lookup --map big - < '$TEST_TMP/keys'"
expect_stderr_contains "stdin:3: 'nope' is not a valid bigint key"

# Malformed TOML: exit 65 with file:line:col.
printf 'catalog = "x"\n[defaults]\nbatch_size = \n' > "$TEST_TMP/broken.toml"
expect_exit 65 shardctl -c "$TEST_TMP/broken.toml" shard list
one_error_line
expect_stderr_contains "broken.toml:3:"
printf '[defaults]\nbatchsize = 10\n' > "$TEST_TMP/typo.toml"
expect_exit 65 shardctl shard list --config "$TEST_TMP/typo.toml"
expect_stderr_contains "typo.toml:2:1"
expect_stderr_contains "batchsize"

# A password in a shard DSN is refused and never echoed, not even with -v.
expect_exit 64 shardctl -v shard add s3 --dsn "host=db3 dbname=three password=hunter2"
one_error_line
expect_stderr_contains "password"
! grep -q hunter2 "$STDERR" "$STDOUT" || fail "password printed"
expect_exit 64 shardctl shard add s3 --dsn "postgresql://u:hunter2@db3/three"
! grep -q hunter2 "$STDERR" "$STDOUT" || fail "password printed"

assert_eq "$(catalog_dump)" "$before"
pass
