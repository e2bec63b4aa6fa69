# Runs a C++ integration test binary with SHARDCTL_TEST_DSN set to a fresh, empty database on
# the fixture's clusters (dropped when the test passes, as lib.sh does for every test). The
# test is named after the binary, so each has its own scratch directory and database list.
TEST_NAME=$(basename "$1")
source "$(dirname "$0")/lib.sh"
fresh_database "$(echo "$TEST_NAME" | tr -c 'a-z0-9_\n' '_' | cut -c1-20)"
export SHARDCTL_TEST_DSN="$SHARDCTL_CATALOG"
"$1"
