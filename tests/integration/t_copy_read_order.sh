# How the source reads a batch for its copy (lib/migrate/index_use.hpp): in primary-key order,
# streamed through an index where the primary key leads with the key column (sorts disabled for
# that read only), else sorted by the source. `-v` names which. The rows are laid out as an
# application writes them (each tenant's rows scattered over the heap), and every row moves
# exactly, offline and online (where the read runs inside the copy's snapshot transaction):
#   ev      primary key (tenant, id)         streamed
#   note    primary key (id), an index on tenant: the key is not the primary key's first column
#   loose   no primary key                   read in no order (not named)
source "$(dirname "$0")/lib.sh"

fresh_fleet cro --shards 2
for i in 1 2; do
  psql_shard "$i" -qc "
    create table acct (tenant bigint primary key, name text not null);
    create table ev (tenant bigint not null references acct, id int not null, body text, primary key (tenant, id));
    create table note (id bigint primary key, tenant bigint not null references acct, body text);
    create index on note (tenant);
    create table loose (tenant bigint not null, v int);
    create index on loose (tenant);
    alter table loose replica identity full;
    alter table note replica identity full"
done
# Tenants 1..400 on shard_1; rows arrive in id order for random tenants.
psql_shard 1 -qc "
  insert into acct select g, 'acct ' || g from generate_series(1, 400) g;
  insert into ev select 1 + abs(hashint4(g)) % 400, g, md5(g::text) from generate_series(1, 20000) g order by g;
  insert into note select g, 1 + abs(hashint4(g + 7)) % 400, md5(g::text) from generate_series(1, 5000) g order by g;
  insert into loose select 1 + abs(hashint4(g + 11)) % 400, g from generate_series(1, 3000) g;
  analyze"
shardctl map create m --kind range --key-type bigint >/dev/null
shardctl mapping add --map m --range ..1000 --shard shard_1 >/dev/null
shardctl mapping add --map m --range 1000.. --shard shard_2 >/dev/null
for t in acct ev note loose; do shardctl table add-sharded "public.$t" --map m --key tenant >/dev/null; done

# count:sum of row hashes of tenants [lo, hi) in every table, on shard N.
digest() {
  psql_shard "$1" -XAtc "select string_agg(t || ':' || x, ' ' order by t) from (
    select 'acct' t, count(*) || ':' || coalesce(sum(hashtext(a::text)), 0) x from acct a where tenant >= $2 and tenant < $3
    union all select 'ev', count(*) || ':' || coalesce(sum(hashtext(e::text)), 0) from ev e where tenant >= $2 and tenant < $3
    union all select 'note', count(*) || ':' || coalesce(sum(hashtext(n::text)), 0) from note n where tenant >= $2 and tenant < $3
    union all select 'loose', count(*) || ':' || coalesce(sum(hashtext(l::text)), 0) from loose l where tenant >= $2 and tenant < $3) s"
}
empty="acct:0:0 ev:0:0 loose:0:0 note:0:0"

step "offline: ev streamed, note sorted, every row moved"
before=$(digest 1 200 400)
expect_exit 0 shardctl split --map m --at 200 --to shard_2 --batch-size 50 -v
expect_stderr_contains "read: in primary-key order through an index: public.acct, public.ev; sorted by the source: public.note"
assert_eq "$(digest 2 200 400)" "$before"
assert_eq "$(digest 1 200 400)" "$empty"

step "online: the same reads inside the snapshot transaction"
before=$(digest 1 100 200)
expect_exit 0 shardctl split --map m --at 100 --to shard_2 --batch-size 50 --online -v
expect_stderr_contains "read: in primary-key order through an index: public.acct, public.ev; sorted by the source: public.note"
assert_eq "$(digest 2 100 200)" "$before"
assert_eq "$(digest 1 100 200)" "$empty"
assert_fleet_consistent

pass
