# Restore after the map changed: customers archived with their orders and lines from two shards,
# then a split moves part of the archived key range to a third shard. `archive restore` puts
# every row on the shard the map routes it to now, parents first; the fleet ends with exactly
# its original rows, each where the map says. A row whose key came back with other contents is
# a conflict (64) that changes nothing.
source "$(dirname "$0")/lib.sh"

fresh_fleet archsplit --shards 3 --scale 1
before=$(fleet_fingerprint)
_unique archsplitdb
psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$UNIQUE_NAME\"" >/dev/null
ARCH="$CATALOG_CLUSTER dbname=$UNIQUE_NAME"
WHERE="customer_id % 3 = 0"
# Each pass archives, then moves archived keys to another shard, then restores.
for pass_args in "postgres:$ARCH|100|shard_3|1" "dir:$TEST_TMP/archive|200|shard_2|100"; do
  IFS="|" read -r DEST at to low <<<"$pass_args"
  expect_exit 0 shardctl archive run --table customers --where "$WHERE" --cascade --to "$DEST" --batch-size 50 \
    --name "j-${DEST%%:*}" --format json
  RUN=$(jq -r .id "$STDOUT")
  for n in 1 2 3; do assert_eq "$(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE")" "0"; done
  # Keys low..at leave shard_1 for another shard while they are archived.
  expect_exit 0 shardctl split --map customers --at "$at" --to "$to" --move lower --batch-size 100
  expect_exit 0 shardctl archive restore "$RUN" --format json
  assert_fleet_consistent
  moved=$(psql_shard "${to#shard_}" -XAtc "select count(*) from customers where customer_id >= $low and customer_id < $at and $WHERE")
  [ "$moved" -gt 0 ] || fail "no restored row of keys $low..$at landed on $to"
  after=$(fleet_fingerprint)
  [ "$after" = "$before" ] || fail "$DEST: rows changed after archive, split and restore
before: $before
after:  $after"
done

# A conflict: the key is back on the shard with other contents; nothing of that batch changes.
expect_exit 0 shardctl archive run --table customers --where "customer_id = 7" --cascade --to "postgres:$ARCH" --name one --format json
RUN=$(jq -r .id "$STDOUT")
s=$(shardctl lookup --map customers 7 | cut -f2)
psql_shard "${s#shard_}" -q -c "insert into customers values (7, 'someone else', 1, now())"
h=$(fleet_fingerprint)
expect_exit 64 shardctl archive restore "$RUN"
expect_stderr_contains "restore conflict"
assert_eq "$(fleet_fingerprint)" "$h"
assert_eq "$(psql -X -At "$ARCH" -c "select count(*) from public.customers where customer_id = 7")" "1"
pass
