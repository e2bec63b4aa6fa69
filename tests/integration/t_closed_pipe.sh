# Output to a closed pipe ends quietly with exit 0, as `git log | head` does, on every output
# path: text arguments, JSON, and the stdin stream. Never SIGPIPE (141).
source "$(dirname "$0")/lib.sh"

fresh_fleet pipe --empty
shardctl shard add s1 --dsn "dbname=one" >/dev/null
shardctl map create customers --kind range --key-type bigint >/dev/null
shardctl mapping add --map customers --range .. --shard s1 >/dev/null
seq 1 300000 > "$TEST_TMP/keys"

# closed_early CMD...: runs CMD with stdout into `head -1`; CMD must exit 0 and print nothing on stderr.
closed_early() {
  local status
  set +o pipefail
  "$@" 2>"$STDERR" | head -1 > "$STDOUT"
  status=${PIPESTATUS[0]}
  set -o pipefail
  [ "$status" = 0 ] || fail "exit $status (141 = SIGPIPE) for: $*"
  [ ! -s "$STDERR" ] || { cat "$STDERR" >&2; fail "stderr not quiet for: $*"; }
  [ -s "$STDOUT" ] || fail "no first line for: $*"
}

# shellcheck disable=SC2046
closed_early shardctl lookup --map customers $(seq 1 20000)
closed_early shardctl lookup --format json --map customers $(seq 1 20000)
closed_early sh -c "'$SHARDCTL_BIN/shardctl' lookup --map customers - < '$TEST_TMP/keys'"
closed_early sh -c "'$SHARDCTL_BIN/shardctl' lookup --format json --map customers - < '$TEST_TMP/keys'"
closed_early shardctl --help
closed_early shardctl lookup --help

# A full disk is not a closed pipe: that write failure is reported. (/dev/full, the kernel's
# always-full device; a container without it cannot run this half: reported as a skip, exit 77.)
[ -w /dev/full ] || skip "no writable /dev/full, so the full-disk half did not run (the closed-pipe half passed)"
expect_exit 69 sh -c "'$SHARDCTL_BIN/shardctl' lookup --format json --map customers - < '$TEST_TMP/keys' > /dev/full"
expect_stderr_contains "cannot write"
pass
