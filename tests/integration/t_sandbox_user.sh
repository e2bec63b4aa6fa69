# The sandbox works for a normal user as well as for root: when the suite runs as root, run
# a whole up/status/down cycle as an unprivileged user (the servers then run as that user,
# with no user switch at all).
source "$(dirname "$0")/lib.sh"

# Only root can become that user (runuser). As a normal user the other sandbox tests already
# run the sandbox unprivileged; this test is then reported as skipped (exit 77, CTest's
# SKIP_RETURN_CODE), not passed. CI runs the suite as root.
needs_root "needs root to run the sandbox as the unprivileged user ${SHARDCTL_SANDBOX_USER:-postgres}"
user=${SHARDCTL_SANDBOX_USER:-postgres}
id "$user" >/dev/null 2>&1 || fail "no user $user to run as"
dir="$TEST_TMP/user-sb"
mkdir -p "$dir"
chown "$user" "$dir" "$TEST_TMP"
# The user runs the binaries from where it can: a copy when the build directory is closed to it
# (a clone under a mode-700 home).
bin=$SHARDCTL_BIN
if ! runuser -u "$user" -- test -x "$bin/shardctl"; then
  mkdir -p "$TEST_TMP/bin"
  cp "$bin"/shardctl "$bin"/shardctl-* "$TEST_TMP/bin/"
  bin=$TEST_TMP/bin
fi
as_user() { runuser -u "$user" -- env HOME="$TEST_TMP" PATH="$PATH" "$bin/shardctl" "$@"; }
trap 'as_user sandbox down --dir "$dir/sb" >/dev/null 2>&1 || true' EXIT

cd "$TEST_TMP"
expect_exit 0 as_user sandbox up --dir "$dir/sb" --shards 2 --scale 0
expect_stdout_contains "fleet demo"
owner=$(stat -c %U "$dir/sb/catalog")
assert_eq "$owner" "$user"
expect_exit 0 as_user --format json sandbox status --dir "$dir/sb"
assert_eq "$(jq -r .running "$STDOUT")" "true"
expect_exit 0 as_user --catalog "$(jq -r '.fleets[0].catalog' "$STDOUT")" map show customers
expect_stdout_contains "shard_2"
expect_exit 0 as_user sandbox down --dir "$dir/sb"
[ ! -e "$dir/sb" ] || fail "sandbox dir left behind"
pass
