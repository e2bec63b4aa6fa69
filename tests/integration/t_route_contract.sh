# The catalog's routing contract (man/shardctl-init.1, ROUTING ROLE): one map version per
# committed change, in commit order, a notice at commit, map_changes that turn an old snapshot
# into the new one (a property over random changes, route_contract.py), 'reload' outside the
# kept log; and a routing role (init --grant-routing) that can call route, map_snapshot and
# map_changes and nothing else of the catalog.
source "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c 'import psycopg' 2>/dev/null || skip "/usr/bin/python3 has no psycopg"

fresh_fleet route_contract --empty
for s in a b c; do shardctl shard add $s --dsn "host=/nonexistent dbname=$s" >/dev/null 2>&1; done
shardctl map create m --kind range --key-type bigint >/dev/null
shardctl mapping add --map m --range ..0 --shard a >/dev/null
shardctl mapping add --map m --range 0..1000000 --shard b >/dev/null
shardctl mapping add --map m --range 1000000.. --shard c >/dev/null
version() { psql_catalog -XAtc "select version from shardctl.maps where name = 'm'"; }

step "shard and mapping commands bump the version once"
v=$(version)
shardctl shard set b --app-dsn "host=bouncer port=6432 dbname=b" >/dev/null
assert_eq "$(version)" $((v + 1))
shardctl shard set b --app-dsn "host=bouncer port=6432 dbname=b" >/dev/null   # no change: no version
assert_eq "$(version)" $((v + 1))
expect_exit 0 shardctl lookup --map m 5 --format json
assert_eq "$(jq -r '.results[0] | [.version, .dsn, .low, .high, .is_point] | map(tostring) | join(" ")' "$STDOUT")" \
  "$((v + 1)) dbname=b host=bouncer port=6432 0 1000000 false"
shardctl shard set b --app-dsn '' >/dev/null
assert_eq "$(version)" $((v + 2))

step "contract property test"
/usr/bin/python3 "$(dirname "$0")/route_contract.py" "$SHARDCTL_CATALOG" m a,b,c ${ROUTE_CONTRACT_SEED:-} ||
  fail "route_contract.py failed"

step "routing role"
shardctl map create g --kind range --key-type bigint >/dev/null   # (the property test rewrote m)
shardctl mapping add --map g --range 0..10 --shard b >/dev/null
shardctl mapping add --map g --range 10.. --shard c >/dev/null
role=rr_$$_$RANDOM
psql_catalog -qc "create role $role login"
trap 'psql_catalog -qc "drop owned by $role; drop role if exists $role" >/dev/null 2>&1 || true' EXIT
expect_exit 64 shardctl init --grant-routing "nosuch_$role"
expect_stderr_contains "no role 'nosuch_$role'"
expect_exit 0 shardctl init --grant-routing "$role" --dry-run
expect_stdout_contains "would run: GRANT USAGE ON SCHEMA shardctl TO \"$role\";"
assert_eq "$(psql_catalog -XAtc "select has_schema_privilege('$role', 'shardctl', 'usage')")" f
expect_exit 0 shardctl init --grant-routing "$role"
expect_stdout_contains "GRANT EXECUTE ON FUNCTION shardctl.route(text, text), shardctl.route(text, bigint)"
as_role="$SHARDCTL_CATALOG user=$role"
assert_eq "$(psql -X "$as_role" -Atc "select shard from shardctl.route('g', '5')")" b
assert_eq "$(psql -X "$as_role" -Atc "select shard from shardctl.route('g', 15::bigint)")" c
assert_eq "$(psql -X "$as_role" -Atc "select count(*) from shardctl.map_snapshot('g')")" 2
psql -X "$as_role" -Atc "select * from shardctl.map_changes('g', 1)" >/dev/null
for t in shards maps mappings operations map_log; do
  out=$(psql -X "$as_role" -Atc "select * from shardctl.$t" 2>&1) && fail "the routing role read shardctl.$t"
  assert_contains "$out" "permission denied"
done
# Every other function of schema shardctl is closed to it, the constructors PostgreSQL makes
# for the key range types (shardctl.textrange(text, text), ...) included.
allowed=$(psql_catalog -XAtc "select string_agg(p.oid::regprocedure::text, ',' order by p.oid::regprocedure::text) from pg_proc p
                              where p.pronamespace = 'shardctl'::regnamespace and has_function_privilege('$role', p.oid, 'execute')")
assert_eq "$allowed" "shardctl.map_changes(text,bigint),shardctl.map_snapshot(text),shardctl.route(text,bigint),shardctl.route(text,text),shardctl.route(text,uuid)"
out=$(psql -X "$as_role" -Atc "select shardctl.map_changed(1, 1)" 2>&1) && fail "the routing role called map_changed"
assert_contains "$out" "permission denied"
out=$(psql -X "$as_role" -Atc "select shardctl.textrange('a', 'b')" 2>&1) && fail "the routing role called a range constructor"
assert_contains "$out" "permission denied"
pass
