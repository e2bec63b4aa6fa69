# CTest fixture: starts the clusters every integration test makes its databases on.
set -euo pipefail
mkdir -p "$SHARDCTL_TEST_TMP"
chmod 755 "$SHARDCTL_TEST_TMP"
# A sandbox left by an interrupted run is stopped and replaced.
"$SHARDCTL_BIN/shardctl" sandbox down --dir "$SHARDCTL_TEST_SANDBOX" >/dev/null 2>&1 || true
# A cleanup cut short (the fixture's timeout) may leave a half-removed directory that `down`
# no longer recognizes as a sandbox: nothing of it is worth keeping.
rm -rf "$SHARDCTL_TEST_SANDBOX"
"$SHARDCTL_BIN/shardctl" sandbox up --dir "$SHARDCTL_TEST_SANDBOX" --no-fleet
