# An unreachable catalog is exit 69 within 10 s with one clear line, never a hang.
source "$(dirname "$0")/lib.sh"

timed() {  # runs the command, fails if it took 10 s or more
  local t0 t1; t0=$(date +%s%N); "$@" || true; t1=$(date +%s%N)
  local ms=$(( (t1 - t0) / 1000000 ))
  [ "$ms" -lt 10000 ] || fail "took ${ms} ms: $*"
}

# Nothing listens on this socket directory.
mkdir -p "$TEST_TMP/nosock"
timed expect_exit 69 shardctl --catalog "host=$TEST_TMP/nosock port=1 dbname=x" shard list
expect_stderr_contains "cannot connect to catalog"
# A catalog DSN with a password is refused before any connection, and never echoed.
expect_exit 64 shardctl -v --catalog "host=$TEST_TMP/nosock port=1 dbname=x password=hunter2" shard list
expect_stderr_contains "--catalog contains a password"
! grep -q hunter2 "$STDERR" || fail "password printed"

# Nothing listens on this loopback port.
timed expect_exit 69 shardctl --catalog "host=127.0.0.1 port=1 dbname=x" map list

# A server that accepts the connection but never answers: a stopped postmaster of a private
# sandbox. connect_timeout (5 s unless the DSN sets one) bounds the wait.
dir="$TEST_TMP/frozen"
shardctl sandbox up --dir "$dir" --no-fleet -q >/dev/null
trap 'kill -CONT $pid 2>/dev/null || true; shardctl sandbox down --dir "$dir" >/dev/null 2>&1 || true' EXIT
catalog=$(shardctl sandbox fleet frozen --dir "$dir" --empty)
pid=$(shardctl sandbox status --dir "$dir" --format json | jq -r '.clusters[] | select(.name == "catalog") | .pid')
[ -n "$pid" ] && [ "$pid" != null ] || fail "no postmaster pid found under $dir"
kill -STOP "$pid"
timed expect_exit 69 shardctl --catalog "$catalog" shard list
expect_stderr_contains "cannot connect to catalog"
kill -CONT "$pid"
expect_exit 0 shardctl --catalog "$catalog" shard list
pass
