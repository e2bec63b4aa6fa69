# Shared setup of the reference-table tests (t_check_references.sh, t_sync_reference.sh).
# Source it after lib.sh. refs_fleet NAME: a 3-shard sample fleet (whose region and product
# are reference tables already) plus a chain of three reference tables with foreign keys
# (ref_country <- ref_city <- ref_site: text, composite and bigint keys, NULLs, large text
# and bytea values) and ref_note without a primary key, identical on every shard, declared
# with shard_1 as their source (ref_note: the majority).

refs_fleet() {
  fresh_fleet "$1" --shards 3 --scale 1
  local i
  for ((i = 1; i <= 3; i++)); do
    psql_shard "$i" -q <<'SQL'
create table ref_country (code text primary key, name text not null);
create table ref_city (country text references ref_country, city_no int, name text, primary key (country, city_no));
create table ref_site (site_id bigint primary key, country text not null, city_no int not null, note text, logo bytea,
                       foreign key (country, city_no) references ref_city);
create table ref_note (line text, n int);
insert into ref_country select 'C' || g, 'country ' || g from generate_series(1, 30) g;
insert into ref_city select 'C' || (g % 30 + 1), g, case when g % 7 <> 0 then 'city ' || g end from generate_series(1, 300) g;
insert into ref_site
select g, 'C' || ((g % 300 + 1) % 30 + 1), g % 300 + 1,
       case when g % 3 = 0 then null when g % 500 = 0 then repeat('long note ', 20000) else 'site ' || g end,
       case when g % 1000 = 0 then convert_to(repeat('b', 300000), 'UTF8') when g % 2 = 0 then decode(md5(g::text), 'hex') end
from generate_series(1, 3000) g;
insert into ref_note select 'note ' || (g % 40), g % 3 from generate_series(1, 100) g;
SQL
  done
  local t
  for t in ref_country ref_city ref_site; do shardctl table add-reference "$t" --source shard_1 >/dev/null; done
  shardctl table add-reference ref_note >/dev/null
}

# refs_fingerprint N: every reference table of shard N as "table:count:hash-sum", one line.
refs_fingerprint() {
  psql_shard "$1" -XAt <<'SQL'
select string_agg(t || ':' || c || ':' || h, ' ' order by t) from (
  select 'country' t, count(*) c, sum(hashtextextended(x::text, 0)::numeric) h from ref_country x
  union all select 'city', count(*), sum(hashtextextended(x::text, 0)::numeric) from ref_city x
  union all select 'site', count(*), sum(hashtextextended(x::text, 0)::numeric) from ref_site x
  union all select 'note', count(*), sum(hashtextextended(x::text, 0)::numeric) from ref_note x
  union all select 'product', count(*), sum(hashtextextended(x::text, 0)::numeric) from product x
  union all select 'region', count(*), sum(hashtextextended(x::text, 0)::numeric) from region x) a
SQL
}
refs_all_fingerprints() { echo "$(refs_fingerprint 1)|$(refs_fingerprint 2)|$(refs_fingerprint 3)"; }

# refs_damage: shard_2 misses a site, has an extra country (with a city in it) and changed
# sites (a value set NULL, a large bytea changed); shard_3 has a changed city and, in ref_note,
# one row missing and one duplicated.
refs_damage() {
  psql_shard 2 -q <<'SQL'
delete from ref_site where site_id = 17;
insert into ref_country values ('ZZ', 'extra');
insert into ref_city values ('ZZ', 1, 'extra city');
update ref_site set note = null where site_id = 5;
update ref_site set logo = convert_to(repeat('c', 300000), 'UTF8') where site_id = 1000;
SQL
  psql_shard 3 -q <<'SQL'
update ref_city set name = 'renamed' where country = 'C2' and city_no = 1;
delete from ref_note where ctid = (select min(ctid) from ref_note where line = 'note 1');
insert into ref_note values ('note 2', 2);
SQL
}

# refs_idle: no client session but the asking one is connected to any shard's database. A
# backend flushes its table counters before it leaves pg_stat_activity, so once idle,
# pg_stat_user_tables (read in a new session) holds the scans of every session that has ended.
refs_idle() {
  local i
  for i in 1 2 3; do
    [ "$(psql_shard "$i" -XAtc "select count(*) from pg_stat_activity where datname = current_database()
      and backend_type = 'client backend' and pid <> pg_backend_pid()")" = 0 ] || return 1
  done
}
