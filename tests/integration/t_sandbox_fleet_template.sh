# `sandbox fleet` clones fleets from template databases built once per set of options: fleets
# asked for concurrently all come out complete and independent, each catalog names its own
# shard databases, the data is the sample's, and --empty fleets have their own template.
source "$(dirname "$0")/lib.sh"

templates() {
  psql -X -Atc "select datname || ':' || datallowconn from pg_database
                where datname like 'shardctl-template-%-s3-x1\_%' order by 1" "$CATALOG_CLUSTER dbname=postgres"
}
# Four fleets at once, two processes each, all with the same options.
pids=()
for i in 1 2 3 4; do
  "$SHARDCTL_BIN/shardctl" sandbox fleet "tpl_$$_$i" --dir "$SHARDCTL_TEST_SANDBOX" --shards 3 --scale 1 \
    --format json > "$TEST_TMP/fleet_$i.json" 2> "$TEST_TMP/fleet_$i.err" &
  pids+=($!)
done
for i in 1 2 3 4; do wait "${pids[$((i - 1))]}" || { cat "$TEST_TMP/fleet_$i.err" >&2; fail "fleet $i failed"; }; done

# One template set, complete (connections disallowed), on the catalog cluster.
assert_contains "$(templates)" "_catalog:f"

declare -A seen
for i in 1 2 3 4; do
  FLEET_JSON="$TEST_TMP/fleet_$i.json"
  name="tpl_$$_$i"
  # Same shape as before: name, catalog, shards[{name, dsn}], each naming the fleet's databases.
  assert_eq "$(jq -r '[.name, (.shards | length), (.shards | map(.name) | join(","))] | join(" ")' "$FLEET_JSON")" \
    "$name 3 shard_1,shard_2,shard_3"
  SHARDCTL_CATALOG=$(jq -r .catalog "$FLEET_JSON")
  export SHARDCTL_CATALOG FLEET_JSON
  assert_contains "$SHARDCTL_CATALOG" "dbname=${name}_catalog"
  # The catalog's shards are the fleet's own databases, as `fleet` printed them.
  assert_eq "$(psql_catalog -XAtc "select string_agg(name || '=' || dsn, ' ' order by name) from shardctl.shards")" \
    "$(jq -r '.shards | map(.name + "=" + .dsn) | join(" ")' "$FLEET_JSON")"
  for s in 1 2 3; do
    assert_contains "$(shard_dsn "$s")" "dbname=${name}_shard_$s"
    assert_eq "$(psql_shard "$s" -XAtc 'select current_database()')" "${name}_shard_$s"
  done
  fp=$(fleet_fingerprint)
  seen[$fp]=1
  assert_fleet_consistent
done
# Identical sample data in every clone, and it is the sample: 1000 customers.
assert_eq "${#seen[@]}" "1"
assert_contains "$fp" "customers 1000 "

# Clones are independent: a split in fleet 1 changes nothing in fleet 2.
FLEET_JSON="$TEST_TMP/fleet_2.json" SHARDCTL_CATALOG=$(jq -r .catalog "$TEST_TMP/fleet_2.json")
export FLEET_JSON SHARDCTL_CATALOG
before2=$(catalog_dump)
FLEET_JSON="$TEST_TMP/fleet_1.json" SHARDCTL_CATALOG=$(jq -r .catalog "$TEST_TMP/fleet_1.json") \
  expect_exit 0 shardctl split --map customers --at 200 --to shard_3 --batch-size 100
FLEET_JSON="$TEST_TMP/fleet_1.json" SHARDCTL_CATALOG=$(jq -r .catalog "$TEST_TMP/fleet_1.json") assert_fleet_consistent
assert_eq "$(catalog_dump)" "$before2"
assert_eq "$(fleet_fingerprint)" "$fp"

# --empty: its own template; an initialized catalog with nothing registered, empty shards.
fresh_fleet tpl_empty --empty --shards 2
expect_exit 0 shardctl shard list --format json
assert_eq "$(jq -r '.shards | length' "$STDOUT")" "0"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from pg_tables where schemaname = 'public'")" "0"
assert_contains "$(psql -X -Atc "select string_agg(datname, ' ') from pg_database where datname like 'shardctl-template-%-s2-empty\_%'" \
  "$CATALOG_CLUSTER dbname=postgres")" "-s2-empty_catalog"

# A name already taken is still refused.
expect_exit 64 shardctl sandbox fleet "tpl_$$_1" --dir "$SHARDCTL_TEST_SANDBOX"
expect_stderr_contains "already exists"
pass
