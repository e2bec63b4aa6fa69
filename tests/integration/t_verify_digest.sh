# Verify by value digest: for a table whose columns are integers, booleans, dates,
# timestamps, text, uuid or numeric, the target's server sums a hash per row and shardctl sums
# the same over the source's COPY stream; a table with another type (jsonb, double precision)
# is read back. Edge values of every covered type move and verify, over one connection and
# over several (--parallel, key parts at once). A target that stores something else than it
# was sent (a trigger giving numerics another scale: equal values, different text) fails the
# verify: exit 70, nothing deleted on the source, the batch left offline there. With one
# connection (the default) a value-digest table is read back inside its load transaction, by
# the blocks the load appended, or by its key range where the load filled older pages.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet vdigest
zoo_all_shards <<'SQL'
create table accounts (
  id bigint primary key, i2 smallint, i4 integer, b boolean, d date, ts timestamp, tstz timestamptz(3),
  t text, v varchar(20), u uuid, n numeric, n2 numeric(12,2), "Mixed Case" text
);
create table events (
  account_id bigint not null references accounts, seq int not null, payload jsonb, score double precision,
  primary key (account_id, seq)
);
SQL
zoo_map accounts range bigint
zoo_sharded accounts accounts id
zoo_sharded events accounts account_id

psql_shard 1 -q -1 <<'SQL'
insert into accounts values
  (1, -32768, -2147483648, true, '-infinity', 'infinity', '2024-02-29 12:00:00.5+00', '', 'ü€', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'NaN', -0.5, 'x'),
  (2, 32767, 2147483647, false, 'infinity', '-infinity', '0044-03-15 BC', E'tab\there', 'x', '00000000-0000-0000-0000-000000000000', 'Infinity', 0, 'Y'),
  (3, null, null, null, null, null, null, null, null, null, null, null, null),
  (4, 0, 0, true, '2000-01-01', '2000-01-01 00:00', '1999-12-31 23:59:59.999+00', 'Ab', 'ab', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '-Infinity', 123.45, ''),
  (5, 1, -1, false, '1999-12-31', '1970-01-01 00:00:00.000001', '2038-01-19 03:14:08+00', repeat('long ', 400), 'v', null, 0.000, -0.01, 'z'),
  (6, -1, 1, true, '9999-12-31', '294276-12-31 23:59:59.999999', 'epoch', 'naïve', 'NAÏVE', null, -99999999999999999999.5, 9999999999.99, 'w'),
  (7, 2, 2, false, '4713-01-01 BC', '4713-01-01 00:00 BC', 'infinity', 'line
break', 'q', null, 1e-20, 0.01, 'v');
insert into accounts
select i, (i % 32767)::smallint, i * 7919, i % 3 = 0, date '2020-01-01' + i, timestamp '2020-01-01' + i * interval '1 minute 3 seconds',
       timestamptz '2020-01-01 00:00+00' + i * interval '17 seconds 250 milliseconds', 'name ' || i, 'v' || i % 50,
       md5(i::text)::uuid, (i * 1.25)::numeric / 3, i / 7.0, case when i % 5 = 0 then null else 'm' || i end
from generate_series(8, 3000) i;
insert into events select a.id, s, jsonb_build_object('k', a.id, 's', s), case when s = 1 then -0.0 when s = 2 then 'NaN' else a.id / 3.0 end
from accounts a, generate_series(1, 3) s;
analyze;
SQL
zoo_baseline
zoo_verify "initial load"

# The dry run says which tables a value digest verifies and which are read back.
expect_exit 0 shardctl split --map accounts --at 1500 --to shard_2 --dry-run
expect_stdout_contains "verify: value digest of public.accounts; rows read back of public.events"

# Several connections, the big table read in key parts: the value digest for accounts, rows
# read back for events (jsonb and double precision have no value digest).
expect_exit 0 shardctl split --map accounts --at 1500 --to shard_2 --batch-size 1000 --parallel 3 -v
expect_stderr_contains "verify: value digest of public.accounts; rows read back of public.events"
expect_stderr_contains "over up to 3 connection(s)"
reads=$(sed -n 's/^verify: .*(\([0-9]*\) read(s).*/\1/p' "$STDERR")
[ "${reads:-0}" -gt 2 ] || fail "the big tables were not read in key parts: $(grep '^verify' "$STDERR")"
zoo_verify "split with --parallel 3"
# One connection (the one that loads each batch reads it back), every edge row (ids 1-7)
# moving this time.
# accounts (value digest) is read back inside the load transaction, by the blocks the load
# appended: shard_2's accounts never lost a row, so the load finds no free space in older pages.
expect_exit 0 shardctl merge --map accounts --range ..1500 --into shard_2 --batch-size 2000 --parallel 1 -v
expect_stderr_contains "(in the load transaction: "
expect_stderr_contains " by block, 0 by key range; 1 read(s) on the connection that loaded the batch)"
by_block=$(sed -n 's/^verify: .*(in the load transaction: \([0-9]*\) read(s) by block.*/\1/p' "$STDERR")
[ "${by_block:-0}" -ge 1 ] || fail "accounts was not read by block: $(grep '^verify' "$STDERR")"
zoo_verify "merge with --parallel 1"
# A target with free space in older pages (rows inserted and deleted, vacuumed, the empty pages
# kept): the load fills them first, below where the table ended, so the reads by block miss
# rows and accounts is read back by its key range instead. Still verified, nothing lost. (The
# fences of the two moves away from shard_1 are lifted first: they refuse the filler rows.)
for op in $(shardctl op list --format json | jq -r '.operations[].id'); do
  expect_exit 0 shardctl op unfence "$op"
done
psql_shard 1 -q <<'SQL'
alter table accounts set (vacuum_truncate = false);
insert into accounts (id, t) select 100000 + i, repeat('x', 200) from generate_series(1, 3000) i;
delete from accounts where id > 100000;
vacuum accounts;
SQL
expect_exit 0 shardctl move --map accounts --key 1 --to shard_1 -v
expect_stderr_contains " by key range; "
ranged=$(sed -n 's/^verify: .* by block, \([0-9]*\) by key range.*/\1/p' "$STDERR")
[ "${ranged:-0}" -ge 1 ] || fail "accounts was not read by key range: $(grep '^verify' "$STDERR")"
zoo_verify "move of ..1500 back with the default, into free space"

# A target that changes what it stores: numerics kept at another scale (1.5 -> 1.500...0, 30 places: equal
# values, so a hash of the numeric value alone would not see it; the value digest hashes the
# text). The trigger fires on the fast path's replica session too (ENABLE ALWAYS).
psql_shard 2 -q <<'SQL'
create function rescale() returns trigger language plpgsql as $$ begin new.n := new.n + 0.000000000000000000000000000000; return new; end $$;
create trigger rescale before insert on accounts for each row execute function rescale();
alter table accounts enable always trigger rescale;
SQL
assert_eq "$(zoo_mappings accounts)" "..1500>shard_1 1500..>shard_2"
on_source=$(psql_shard 1 -XAtc "select count(*) from accounts where id >= 1000")
expect_exit 70 shardctl split --map accounts --at 1000 --to shard_2 --batch-size 1000
expect_stderr_contains "verification of public.accounts batch 1000..1500 failed"
expect_stderr_contains "nothing was deleted; the batch stays offline on shard_1"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from accounts where id >= 1000")" "$on_source"
assert_eq "$(zoo_mappings accounts)" "..1000>shard_1 1000..1500>shard_1 1500..>shard_2"
assert_eq "$(psql_catalog -XAtc "select status from shardctl.mappings m join shardctl.maps p using (map_id)
  where p.name = 'accounts' and lower(m.int_range) = 1000")" "offline"
pass
