# An unreachable catalog is exit 69 with one clear line, never a hang: a refused connection
# fails at once, and a server that accepts the connection but never answers is given up on by
# connect_timeout (5 s unless the DSN sets one: README.md, shardctl(1) EXIT STATUS 69). Each
# command runs under a hang guard (expect_exit_guarded, lib.sh) far above that: the proof that
# connect_timeout ended the wait is libpq's own "timeout expired", not the clock.
source "$(dirname "$0")/lib.sh"

# one_error_line CASE: stderr is one error line saying the catalog cannot be reached, and at
# most a hint line (ARCHITECTURE.md, "Errors and exit codes").
one_error_line() {
  head -1 "$STDERR" | grep -q "^shardctl [a-z]*: error: cannot connect to catalog (" ||
    fail "$1: the first line of stderr does not say the catalog cannot be reached: $(cat "$STDERR")"
  [ "$(wc -l < "$STDERR")" -le 2 ] && { [ "$(wc -l < "$STDERR")" -lt 2 ] || sed -n 2p "$STDERR" | grep -q '^hint: '; } ||
    fail "$1: want one error line and at most a hint, got: $(cat "$STDERR")"
}

# Nothing listens on this socket directory.
mkdir -p "$TEST_TMP/nosock"
expect_exit_guarded 69 shardctl --catalog "host=$TEST_TMP/nosock port=1 dbname=x" shard list
one_error_line "no socket"
# A catalog DSN with a password is refused before any connection, and never echoed.
expect_exit 64 shardctl -v --catalog "host=$TEST_TMP/nosock port=1 dbname=x password=hunter2" shard list
expect_stderr_contains "--catalog contains a password"
! grep -q hunter2 "$STDERR" || fail "password printed"

# Nothing listens on this loopback port.
expect_exit_guarded 69 shardctl --catalog "host=127.0.0.1 port=1 dbname=x" map list
one_error_line "closed loopback port"

# A server that accepts the connection but never answers: a stopped postmaster of a private
# sandbox. Only connect_timeout can end the wait.
dir="$TEST_TMP/frozen"
shardctl sandbox up --dir "$dir" --no-fleet -q >/dev/null
trap 'kill -CONT $pid 2>/dev/null || true; shardctl sandbox down --dir "$dir" >/dev/null 2>&1 || true' EXIT
catalog=$(shardctl sandbox fleet frozen --dir "$dir" --empty)
pid=$(shardctl sandbox status --dir "$dir" --format json | jq -r '.clusters[] | select(.name == "catalog") | .pid')
[ -n "$pid" ] && [ "$pid" != null ] || fail "no postmaster pid found under $dir"
kill -STOP "$pid"
expect_exit_guarded 69 shardctl --catalog "$catalog" shard list
one_error_line "stopped postmaster"
expect_stderr_contains "timeout expired"
kill -CONT "$pid"
expect_exit 0 shardctl --catalog "$catalog" shard list
pass
