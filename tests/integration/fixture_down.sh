# CTest fixture cleanup: stops the test clusters and removes them.
set -euo pipefail
"$SHARDCTL_BIN/shardctl" sandbox down --dir "$SHARDCTL_TEST_SANDBOX"
