# Schema zoo, part 2: a range map over text keys (byte order, default-collation btree
# in a locale-C database; keys in upper and lower case, with spaces and non-ASCII letters), with
# a sharded table without a primary key (a unique index holds the key). Split, split, merge and
# move with several batches, check after each. (uuid keys: t_zoo_uuid.sh; hash: t_zoo_hash.sh.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet zootext
[ "$(psql_shard 1 -XAtc "select datcollate from pg_database where datname = current_database()")" = C ] ||
  fail "the sandbox databases are expected to use locale C"
zoo_all_shards <<'SQL'
-- text keys
create table accounts (account text primary key, opened date not null, balance numeric(14,2) not null);
create table ledger (
  account  text not null references accounts,
  entry_id bigint not null,
  amount   numeric(14,2) not null,
  memo     text,
  primary key (account, entry_id)
);
create table account_flags (account text not null, flag text not null, set_on date);  -- no primary key
create unique index account_flags_uq on account_flags (account, flag);
SQL

if [ -n "${ZOO_ONLINE:-}" ]; then
  # Online (t_zoo_online_text.sh): the table without a primary key gets its unique index as its
  # replica identity, which an online move needs to cover the key (a table without one is
  # refused: t_online_cutover.sh).
  zoo_all_shards <<<"alter table account_flags replica identity using index account_flags_uq"
fi
# Online: each move's first batch streams writes (zoo_lib.sh, ZOO_STREAM_WRITE), some of them to
# the identity's own columns.
ZOO_STREAM_KEYS="select account from accounts"
ZOO_STREAM_WRITE="
update accounts set balance = balance + 1 where account = any(:'keys'::text[]);
insert into ledger select account, max(entry_id) + 1, 9.99, 'streamed' from ledger where account = any(:'keys'::text[]) group by account;
update account_flags set set_on = set_on + 1 where account = any(:'keys'::text[]);
update account_flags set flag = flag || '+' where account = (:'keys'::text[])[2];
delete from account_flags where account = (:'keys'::text[])[1] and flag = 'vip';
insert into account_flags values ((:'keys'::text[])[1], 'streamed ' || clock_timestamp(), date '2024-01-01');"
zoo_map accounts range text
zoo_sharded ledger accounts account
zoo_sharded accounts accounts account
zoo_sharded account_flags accounts account

psql_shard 1 -q -1 <<'SQL'
-- Text keys in byte order: upper case < lower case < 'é' (0xC3) < 'Ω' (0xCE); spaces and
-- punctuation inside.
insert into accounts
select (array['Alpha', 'BRAVO', 'charlie', 'delta west', 'echo', 'émile', 'zoë', 'Ωmega'])[1 + i % 8] || '-' || lpad(i::text, 4, '0'),
       date '2020-01-01' + i, (i * 37 % 10000) / 100.0
from generate_series(1, 320) i;
insert into ledger select a.account, e, (e * 3.25)::numeric(14,2), case when e % 2 = 0 then 'memo ' || e end
from accounts a, generate_series(1, 3) e;
insert into account_flags select account, f, date '2021-06-01' from accounts, unnest(array['vip', 'frozen']) f
where length(account) % 2 = 0 or f = 'vip';
analyze;
SQL
zoo_baseline
echo "# baseline: $ZOO_BASE_SHARDED"
zoo_verify "initial load"
# The routing check can fail: a text key on a shard that does not hold it.
psql_shard 3 -qc "insert into accounts values ('émile-9999', date '2020-01-01', 0)"
must_fail "text key on the wrong shard" \
  "control: rows of map accounts on a shard the map does not route them to: émile-9999 on shard_3, routed to shard_1" \
  zoo_assert_routed control
psql_shard 3 -qc "delete from accounts"

# --- text keys ------------------------------------------------------------------------------
zoo_op "text: split at c to shard_2" split --map accounts --at c --to shard_2 --batch-size 30
assert_eq "$(zoo_mappings accounts)" "..c>shard_1 c..>shard_2"
# Byte order: 'Alpha', 'BRAVO' stay; 'charlie' .. 'Ωmega' moved.
assert_eq "$(psql_shard 1 -XAtc "select string_agg(distinct split_part(account, '-', 1), ',' order by split_part(account, '-', 1)) from accounts")" "Alpha,BRAVO"
zoo_op "text: split at é to shard_3" split --map accounts --at é --to shard_3 --batch-size 25
assert_eq "$(zoo_mappings accounts)" "..c>shard_1 c..é>shard_2 é..>shard_3"
assert_eq "$(psql_shard 3 -XAtc "select string_agg(distinct split_part(account, '-', 1), ',' order by split_part(account, '-', 1)) from accounts")" "émile,Ωmega"
zoo_op "text: merge c.. into shard_4" merge --map accounts --range c.. --into shard_4 --batch-size 40
assert_eq "$(zoo_mappings accounts)" "..c>shard_1 c..>shard_4"
zoo_op "text: move c.. to shard_2" move --map accounts --key 'zoë-0006' --to shard_2 --batch-size 50
assert_eq "$(zoo_mappings accounts)" "..c>shard_1 c..>shard_2"

pass
