# CTest fixture: starts the clusters every integration test makes its databases on.
set -euo pipefail
mkdir -p "$SHARDCTL_TEST_TMP"
chmod 755 "$SHARDCTL_TEST_TMP"
# A sandbox left by an interrupted run is stopped and replaced.
"$SHARDCTL_BIN/shardctl" sandbox down --dir "$SHARDCTL_TEST_SANDBOX" >/dev/null 2>&1 || true
"$SHARDCTL_BIN/shardctl" sandbox up --dir "$SHARDCTL_TEST_SANDBOX" --no-fleet
