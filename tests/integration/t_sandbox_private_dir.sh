# Run as root, the sandbox works in a directory its server user cannot reach (a mode-700
# `mktemp -d`, a clone under /root): the clusters live in a private directory of that user
# under /var/tmp, DIR keeps the state, and the permissions of the operator's directories are
# never changed. `down` removes both; a directory someone else put at that place is refused,
# and clusters left by a sandbox removed without `down` are stopped and replaced.
source "$(dirname "$0")/lib.sh"

# Only root switches the servers to another user; anyone else runs them as themselves, and
# reaches their own directories. CTest reports exit 77 as skipped (SKIP_RETURN_CODE); CI runs
# the suite as root.
needs_root "needs root (not root, so the servers run as this user and any directory of ours is reachable)"
user=${SHARDCTL_SANDBOX_USER:-postgres}
id "$user" >/dev/null 2>&1 || fail "no user $user to run as"

private=$(mktemp -d /tmp/shardctl-test.XXXXXX)  # mode 700, owned by root
chmod 700 "$private"
cd "$private"
dir="$private/.shardctl/sandbox"  # the default directory, as `cd $(mktemp -d) && shardctl sandbox up`
server_dir=""
cleanup() {
  cd "$TEST_TMP"
  "$SHARDCTL_BIN/shardctl" sandbox down --dir "$dir" >/dev/null 2>&1 || true
  [ -z "$server_dir" ] || rm -rf "$server_dir"
  rm -rf "$private"
}
trap cleanup EXIT

expect_exit 0 shardctl sandbox up --shards 2 --scale 0
expect_stdout_contains "created $dir"
expect_stdout_contains "clusters in /var/tmp/shardctl-sandbox-"
assert_eq "$(stat -c '%a %U' "$private")" "700 root"
expect_exit 0 shardctl sandbox status --format json
server_dir=$(jq -r .server_dir "$STDOUT")
assert_contains "$server_dir" "/var/tmp/shardctl-sandbox-"
assert_eq "$(stat -c '%a %U' "$server_dir")" "700 $user"
assert_eq "$(jq -r '[.clusters[] | select(.running)] | length' "$STDOUT")" "3"
assert_eq "$(jq -r '.clusters[0].data_dir' "$STDOUT")" "$server_dir/catalog"
assert_eq "$(stat -c %U "$server_dir/catalog")" "$user"
pids=$(jq -r '.clusters[].pid' "$STDOUT")
[ "$(readlink "$dir/run")" = "$server_dir/run" ] || fail "$dir/run does not lead to the sockets"

# status, env and the config work as usual.
expect_exit 0 shardctl sandbox status
expect_stdout_contains "clusters in $server_dir"
( eval "$(shardctl sandbox env)"
  assert_eq "$PGHOST" "$server_dir/run"
  [ "$(psql -X -Atc 'select count(*) from shardctl.shards')" = 2 ] || fail "psql via sandbox env"
  cd / && "$SHARDCTL_BIN/shardctl" map show customers >/dev/null || fail "shardctl via sandbox env" )
expect_exit 0 shardctl shard list
expect_stdout_contains "shard_2"
expect_exit 0 shardctl sandbox up
assert_eq "$(jq -r .created <(shardctl sandbox up --format json))" "false"

# down: no server, neither directory left.
expect_exit 0 shardctl sandbox down
for p in $pids; do
  state=$(ps -o stat= -p "$p" || true)
  [ -z "$state" ] || [[ "$state" == Z* ]] || fail "server $p still running after down ($state)"
done
[ ! -e "$dir" ] || fail "$dir left behind"
[ ! -e "$server_dir" ] || fail "$server_dir left behind"
assert_eq "$(stat -c '%a %U' "$private")" "700 root"

# A directory at that place that is not the server user's own private one is never adopted.
mkdir -m 755 "$server_dir"
expect_exit 64 shardctl sandbox up --shards 1 --scale 0
expect_stderr_contains "$server_dir exists and is not a private directory of user $user"
[ -d "$server_dir" ] || fail "someone else's $server_dir was removed"
[ ! -e "$dir/state.json" ] || fail "a failed up left a state file"
rmdir "$server_dir"

# A sandbox removed without `down` (rm -rf DIR): the next `up` stops its servers and starts over.
expect_exit 0 shardctl sandbox up --shards 1 --scale 0
expect_exit 0 shardctl sandbox status --format json
old_pids=$(jq -r '.clusters[].pid' "$STDOUT")
rm -rf "$dir"
expect_exit 0 shardctl sandbox up --shards 1 --scale 0
expect_stdout_contains "created $dir"
for p in $old_pids; do
  state=$(ps -o stat= -p "$p" || true)
  [ -z "$state" ] || [[ "$state" == Z* ]] || fail "leftover server $p still running"
done
expect_exit 0 shardctl shard list
expect_exit 0 shardctl sandbox down
[ ! -e "$server_dir" ] || fail "$server_dir left behind"
pass
