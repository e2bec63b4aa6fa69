# The committed routing test vectors (clients/vectors/routing.json) are what the server says
# today: clients/vectors/generate.sh, run on a fresh catalog database, writes a byte-identical
# file (every port of the client checks itself against that file).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/client_lib.sh"

fresh_database vectors
step "regenerate"
SHARDCTL_CLIENT_PYTHON=$CLIENT_PY bash "$SHARDCTL_SOURCE_DIR/clients/vectors/generate.sh" "$TEST_TMP/routing.json" > "$TEST_TMP/gen.out" 2>&1 ||
  { cat "$TEST_TMP/gen.out" >&2; fail "generate.sh failed"; }
cat "$TEST_TMP/gen.out"
step "compare"
cmp "$TEST_TMP/routing.json" "$SHARDCTL_SOURCE_DIR/clients/vectors/routing.json" ||
  { diff "$SHARDCTL_SOURCE_DIR/clients/vectors/routing.json" "$TEST_TMP/routing.json" | head -20 >&2
    fail "the committed vectors differ from what the server says (regenerate: clients/vectors/generate.sh)"; }
# The file covers what it is for (a regenerated file that lost cases would still compare equal
# to a committed one that lost them too).
n=$(jq '.vectors | length' "$TEST_TMP/routing.json")
[ "$n" -ge 800 ] || fail "only $n vectors"
assert_eq "$(jq -r '[.maps[] | .kind + "_" + .key_type] | sort | join(" ")' "$TEST_TMP/routing.json")" \
  "hash_bigint hash_int hash_text hash_uuid list_bigint list_int list_text list_uuid range_bigint range_int range_text range_uuid"
for want in '"-9223372036854775808"' '"9223372036854775807"' '"-2147483648"' '"2147483647"' '""' '"{a0eebc999c0b4ef8bb6d6bb9bd380a11}"'; do
  jq -e ".vectors | map(.key) | index($want)" "$TEST_TMP/routing.json" >/dev/null || fail "no vector for key $want"
done
[ "$(jq '[.vectors[] | select(.shard == null)] | length' "$TEST_TMP/routing.json")" -ge 10 ] || fail "too few unmapped keys"
[ "$(jq '[.invalid[] | select(.sqlstate == "22P02")] | length' "$TEST_TMP/routing.json")" -ge 30 ] || fail "too few invalid keys"
pass
