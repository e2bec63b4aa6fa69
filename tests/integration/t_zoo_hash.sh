# Schema zoo, part 2b: a hash map over bigint keys, with the expression index
# `((hashint8extended(key, 0)))` on every sharded table that hash batches need, and a sharded
# table without a primary key or any unique index (a plain index on the key, duplicate rows).
# Split, split, merge and move over hash values with several batches, check after each.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet zoohash
zoo_all_shards <<'SQL'
create table streams (stream_id bigint primary key, name text not null);
create index streams_hash on streams ((hashint8extended(stream_id, 0)));
create table stream_events (stream_id bigint not null references streams, n int not null, payload jsonb,
                            primary key (stream_id, n));
create index stream_events_hash on stream_events ((hashint8extended(stream_id, 0)));
-- No primary key, no unique index: a plain index on the key, and rows that are exact duplicates.
create table stream_log (stream_id bigint not null, at int not null, line text);
create index stream_log_key on stream_log (stream_id);
create index stream_log_hash on stream_log ((hashint8extended(stream_id, 0)));
SQL
if [ -n "${ZOO_ONLINE:-}" ]; then
  # Online (t_zoo_online_hash.sh): the table without a unique index can only be identified by
  # all of its columns, duplicates and all (an online move needs the replica identity to cover
  # the key; a table without one is refused: t_online_cutover.sh).
  zoo_all_shards <<<"alter table stream_log replica identity full"
fi
# Online: each move's first batch streams writes (zoo_lib.sh, ZOO_STREAM_WRITE), among them one
# of two duplicate rows deleted. (No 'duplicate' line changes: the test counts them at the end.)
ZOO_STREAM_KEYS="select stream_id::text from streams"
ZOO_STREAM_WRITE="
update streams set name = name || ' (streamed)' where stream_id = any(:'keys'::bigint[]);
update stream_events set payload = payload || '{\"streamed\": true}' where stream_id = any(:'keys'::bigint[]);
insert into stream_events select stream_id, max(n) + 1, null from stream_events where stream_id = any(:'keys'::bigint[]) group by stream_id;
update stream_log set line = line || ' (streamed)' where stream_id = any(:'keys'::bigint[]) and line <> 'duplicate';
insert into stream_log select k, -1, 'twin' from unnest(:'keys'::bigint[]) k, generate_series(1, 2);
delete from stream_log where ctid = (select min(ctid) from stream_log where stream_id = (:'keys'::bigint[])[1] and line = 'twin');"
zoo_map streams hash bigint
zoo_sharded stream_log streams stream_id
zoo_sharded stream_events streams stream_id
zoo_sharded streams streams stream_id

psql_shard 1 -q -1 <<'SQL'
insert into streams select s, 'stream ' || s from generate_series(1, 300) s;
insert into stream_events select s, n, jsonb_build_object('s', s, 'n', n, 'tags', jsonb_build_array('a', n))
from generate_series(1, 300) s, generate_series(1, 2) n;
insert into stream_log select s, a, 'line ' || s || '/' || a from generate_series(1, 300) s, generate_series(1, 2) a;
insert into stream_log select s, 0, 'duplicate' from generate_series(1, 300, 10) s, generate_series(1, 2);
analyze;
SQL
zoo_baseline
echo "# baseline: $ZOO_BASE_SHARDED"
zoo_verify "initial load"
# The fingerprint sees a lost duplicate.
psql_shard 1 -qc "delete from stream_log where ctid = (select min(ctid) from stream_log where line = 'duplicate')"
must_fail "one of two duplicate rows lost" "control: sharded rows changed in stream_log (fingerprint: < before, > after)" \
  zoo_assert_unchanged control
psql_shard 1 -qc "insert into stream_log values (1, 0, 'duplicate')"
zoo_verify "control undone"

zoo_op "hash: split at 0 to shard_2" split --map streams --at 0 --to shard_2 --batch-size 30
assert_eq "$(zoo_mappings streams)" "..0>shard_1 0..>shard_2"
# The server's own hash agrees with where the rows went.
assert_eq "$(psql_shard 2 -XAtc "select count(*) from streams where hashint8extended(stream_id, 0) < 0")" "0"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from streams where hashint8extended(stream_id, 0) >= 0")" "0"
zoo_op "hash: split at 2^62 to shard_3" split --map streams --at 4611686018427387904 --to shard_3 --batch-size 25
assert_eq "$(zoo_mappings streams)" "..0>shard_1 0..4611686018427387904>shard_2 4611686018427387904..>shard_3"
zoo_op "hash: merge 0.. into shard_4" merge --map streams --range 0.. --into shard_4 --batch-size 40
assert_eq "$(zoo_mappings streams)" "..0>shard_1 0..>shard_4"
hkey=$(psql_shard 1 -XAtc "select stream_id from streams order by stream_id limit 1")
zoo_op "hash: move ..0 to shard_3" move --map streams --key "$hkey" --to shard_3 --batch-size 50
assert_eq "$(zoo_mappings streams)" "..0>shard_3 0..>shard_4"
# The duplicate rows of the table without a primary key moved as duplicates.
assert_eq "$(zoo_fingerprint "stream_log|x.line = 'duplicate'" | awk '{print $(NF-2)}')" "60"
pass
