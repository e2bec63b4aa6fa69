# mapping remove (and map drop) are refused with exit 75 while an unfinished operation covers
# the range, and work again once it is done.
source "$(dirname "$0")/lib.sh"

fresh_fleet inuse --empty
shardctl shard add s1 --dsn "dbname=x" >/dev/null
shardctl map create m --kind range --key-type bigint >/dev/null
shardctl mapping add --map m --range 0..100 --shard s1 >/dev/null
shardctl mapping add --map m --range 100..200 --shard s1 >/dev/null
op=3f1f1c8e-0f4e-4a52-9a47-5d8e1b7a9c01
psql_catalog -q -c "insert into shardctl.operations (op_id, kind, map_id, int_range, status, lease_holder)
  values ('$op', 'split', (select map_id from shardctl.maps where name = 'm'), int8range(50, 80), 'running', 'host:1')"
before=$(catalog_dump)

expect_exit 75 shardctl mapping remove --map m --range 0..100 --yes
expect_stderr_contains "in use by operation $op (split, running)"
expect_stderr_contains "shardctl op"
expect_exit 75 shardctl map drop m --force --yes
assert_eq "$(catalog_dump)" "$before"

# Another range of the same map is free.
expect_exit 0 shardctl mapping remove --map m --range 100..200 --yes

psql_catalog -q -c "update shardctl.operations set status = 'done' where op_id = '$op'"
expect_exit 0 shardctl mapping remove --map m --range 0..100 --yes
pass
