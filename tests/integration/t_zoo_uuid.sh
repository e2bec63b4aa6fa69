# Schema zoo, part 2c: a range map over uuid keys (spread over the whole key space,
# split points spelled in upper and lower case), with an ON DELETE CASCADE child among the
# moving tables and double precision values. Split, split, merge and move with several
# batches, check after each.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet zoouuid
zoo_all_shards <<'SQL'
create table devices (device_id uuid primary key, model text not null, registered timestamptz not null);
create table readings (
  device_id uuid not null references devices on delete cascade,
  seq       int not null,
  value     double precision not null,
  primary key (device_id, seq)
);
SQL
# Online (t_zoo_online_uuid.sh): each move's first batch streams writes (zoo_lib.sh,
# ZOO_STREAM_WRITE): updates, an insert, and a delete that cascades to the child.
ZOO_STREAM_KEYS="select device_id::text from devices"
ZOO_STREAM_WRITE="
update devices set model = model || ' (streamed)' where device_id::text = any(:'keys'::text[]);
update readings set value = value * 2 where device_id::text = any(:'keys'::text[]) and seq = 1;
insert into readings select device_id, max(seq) + 1, -0.5 from readings where device_id::text = any(:'keys'::text[]) group by device_id;
delete from devices where device_id::text = (:'keys'::text[])[2];"
zoo_map devices range uuid
zoo_sharded readings devices device_id
zoo_sharded devices devices device_id

psql_shard 1 -q -1 <<'SQL'
insert into devices select md5('dev' || i)::uuid, 'model ' || i % 7, timestamptz '2023-01-01 00:00+00' + i * interval '1 hour'
from generate_series(1, 300) i;
insert into readings select d.device_id, s, (s * 1.1 + ascii(d.device_id::text)) / 3.0 from devices d, generate_series(1, 3) s;
analyze;
SQL
zoo_baseline
echo "# baseline: $ZOO_BASE_SHARDED"
zoo_verify "initial load"

# --- uuid keys ------------------------------------------------------------------------------
zoo_op "uuid: split at 8000... to shard_2" split --map devices --at 80000000-0000-0000-0000-000000000000 --to shard_2 --batch-size 30
assert_eq "$(zoo_mappings devices)" "..80000000-0000-0000-0000-000000000000>shard_1 80000000-0000-0000-0000-000000000000..>shard_2"
zoo_op "uuid: split at c000... to shard_3" split --map devices --at C0000000-0000-0000-0000-000000000000 --to shard_3 --batch-size 20
zoo_op "uuid: merge 8000.. into shard_4" merge --map devices --range 80000000-0000-0000-0000-000000000000.. --into shard_4 --batch-size 40
assert_eq "$(zoo_mappings devices)" "..80000000-0000-0000-0000-000000000000>shard_1 80000000-0000-0000-0000-000000000000..>shard_4"
ukey=$(psql_shard 1 -XAtc "select device_id from devices order by device_id limit 1")
zoo_op "uuid: move ..8000 to shard_3" move --map devices --key "$ukey" --to shard_3 --batch-size 50
assert_eq "$(zoo_mappings devices)" "..80000000-0000-0000-0000-000000000000>shard_3 80000000-0000-0000-0000-000000000000..>shard_4"
# zoo_op's batch count can fail: the same mapping moved back in one batch is refused by it.
must_fail "one batch" "uuid: one batch: ran in 1 batch(es), the test needs more than one" \
  zoo_op "uuid: one batch" move --map devices --key "$ukey" --to shard_1 --batch-size 100000

pass
