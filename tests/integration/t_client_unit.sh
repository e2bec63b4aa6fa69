# The Python reference client's own unit tests (clients/python/tests, stdlib unittest, no
# database): the hash port against the server's vectors (clients/vectors/routing.json), key
# parsing against `shardctl lookup`'s rules as route() applies them, local routing against
# route() for every vector, the cache applying map_changes rows, refusal classification.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/client_lib.sh"

step "unittest"
cd "$CLIENT_DIR"
client_py -m unittest discover -s tests -t . -v > "$TEST_TMP/unittest.out" 2>&1 || { cat "$TEST_TMP/unittest.out" >&2; fail "unit tests failed"; }
tail -3 "$TEST_TMP/unittest.out"
ran=$(sed -n 's/^Ran \([0-9]*\) tests.*/\1/p' "$TEST_TMP/unittest.out")
[ "${ran:-0}" -ge 20 ] || fail "only ${ran:-0} unit tests ran (discovery lost some?)"
grep -q '^OK$' "$TEST_TMP/unittest.out" || fail "unittest did not say OK"
pass
