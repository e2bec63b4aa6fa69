# The Python client's MapCache against a real fleet (clients/python/itests/cache_check.py),
# reading the catalog as a role granted routing only (`shardctl init --grant-routing`): the
# snapshot loaded and routing as shardctl.route() does; a split's mapping changes reaching the
# cache through NOTIFY alone (notice -> cache updated measured); with the listening
# connection killed (pg_terminate_backend) and its role unable to log in again, changes still
# reaching the cache by polling, and notices again once it can; 8 threads needing the same new
# version causing exactly one map_changes call.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/client_lib.sh"

fresh_fleet cache --shards 4 --scale 1
step "cache"
export SHARDCTL_BIN CACHE_LISTEN_ROLE="cache_listen_$$" CACHE_ROUTING_DSN=""
# The cache as an application runs it: a role that may only route (shardctl init --grant-routing).
if shardctl init --help | grep -q -- '--grant-routing'; then
  router_role="cache_router_$$"
  psql_catalog -qc "create role \"$router_role\" login" >/dev/null
  trap 's=$?; psql -X -q "$SHARDCTL_CATALOG" -c "drop owned by \"$router_role\"; drop role if exists \"$router_role\"" >/dev/null 2>&1; (exit $s); _drop_made_databases' EXIT
  expect_exit 0 shardctl init --grant-routing "$router_role"
  CACHE_ROUTING_DSN="$SHARDCTL_CATALOG user=$router_role"
fi
client_py "$CLIENT_DIR/itests/cache_check.py" > "$TEST_TMP/cache.out" 2>&1 || {
  cat "$TEST_TMP/cache.out" >&2
  psql_catalog -qc "drop role if exists \"$CACHE_LISTEN_ROLE\"" >/dev/null 2>&1 || true
  fail "cache_check.py failed (above)"
}
cat "$TEST_TMP/cache.out"
grep -q '^# cache_check: ok$' "$TEST_TMP/cache.out" || fail "cache_check.py did not finish"
pass
