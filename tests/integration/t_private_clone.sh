# The suite runs from a clone under a directory other users cannot enter (a mode-700 home such
# as /root, the README's own case when run as root): the server user must reach the clusters'
# directories and sockets, and t_sandbox_user's user the binaries. tests/CMakeLists.txt puts the
# test clusters and scratch files where they can (reachable_dir.sh); this test clones the
# sources under a fresh mode-700 directory, with the binaries inside it, and runs the fixture
# and two tests from the clone exactly as CTest would: t_sandbox_user (binaries and scratch
# space reached by another user) and t_split_target_down (a private sandbox stopped by the
# server user). As a normal user the server runs as that same user and nothing is closed to it:
# the test is then skipped (exit 77).
source "$(dirname "$0")/lib.sh"
needs_root "a directory closed to the server user needs root to make"

private=$(mktemp -d)   # mode 700, root's
trap 'rm -rf "$private"' EXIT
assert_eq "$(stat -c %a "$private")" "700"
if git -C "$SHARDCTL_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1; then
  git clone -q "$SHARDCTL_SOURCE_DIR" "$private/src"
else
  mkdir -p "$private/src" && cp -a "$SHARDCTL_SOURCE_DIR/tests" "$SHARDCTL_SOURCE_DIR/clients" "$private/src/"
fi
# The working tree's test scripts, so that what runs is what this build tests.
cp -a "$SHARDCTL_SOURCE_DIR/tests/integration/." "$private/src/tests/integration/"
mkdir -p "$private/src/build/bin"
cp "$SHARDCTL_BIN"/shardctl "$SHARDCTL_BIN"/shardctl-* "$private/src/build/bin/"
user=${SHARDCTL_SANDBOX_USER:-postgres}
! runuser -u "$user" -- test -x "$private/src/build/bin/shardctl" ||
  fail "$user can run binaries under $private: the case this test is for does not arise"

# What tests/CMakeLists.txt gives CTest, for a build directory in the clone.
it=$private/src/tests/integration
sandbox=$(bash "$it/reachable_dir.sh" "$private/src/build/test-clusters")
scratch=$(bash "$it/reachable_dir.sh" "$private/src/build/test-tmp")
for d in "$sandbox" "$scratch"; do
  [[ "$d" != "$private"/* ]] || fail "reachable_dir.sh kept $d inside the closed directory"
done
assert_eq "$(bash "$it/reachable_dir.sh" "$TEST_TMP/open/test-tmp")" "$TEST_TMP/open/test-tmp"
inner() {
  env SHARDCTL_BIN="$private/src/build/bin" SHARDCTL_TEST_SANDBOX="$sandbox" SHARDCTL_TEST_TMP="$scratch" \
    SHARDCTL_SOURCE_DIR="$private/src" bash "$it/$1" > "$TEST_TMP/$1.log" 2>&1 ||
    { tail -20 "$TEST_TMP/$1.log" >&2; fail "$1, run from the clone under $private, failed"; }
}
trap 'env SHARDCTL_BIN="$private/src/build/bin" SHARDCTL_TEST_SANDBOX="$sandbox" bash "$it/fixture_down.sh" >/dev/null 2>&1 || true
      rm -rf "$private" "$(dirname "$sandbox")"' EXIT
inner fixture_up.sh
assert_eq "$(stat -c %U "$sandbox/catalog")" "$user"
inner t_sandbox_user.sh
inner t_split_target_down.sh
inner fixture_down.sh
pass
