#!/usr/bin/env bash
# Benchmark: `shardctl schema apply --parallel 8` against a psql shell loop applying the same
# files, on 64 shard databases of the sandbox's clusters (2 shard clusters, 32 databases each).
# Every database is a copy of a template holding a 100,000-row table `events` (not timed).
# The 5 migrations:
#   V1 create table customers            V2 create table orders + FK + index
#   V3 CREATE INDEX CONCURRENTLY on events (100k rows; -- shardctl:no-transaction)
#   V4 alter table events add column     V5 a function and a view
# Measured, each on its own fresh set of 64 databases:
#   psql-loop      for each database, for each file: psql -1 -f FILE (V3 without -1)
#   psql-xargs-8   the same per-database loop, 8 databases at a time (xargs -P 8), no history
#   shardctl       shardctl schema apply DIR --parallel 8 (history, lock, checksums)
# Usage: bench/schema.sh [BIN_DIR] [SHARDS]
source "$(dirname "$0")/lib.sh" "${1:-}"
n=${2:-64}

sandbox_up --no-fleet

M="$work/migrations"
mkdir -p "$M"
cat > "$M/V1__customers.sql" <<'SQL'
create table customers (id bigint primary key, name text not null, created_at timestamptz not null default now());
SQL
cat > "$M/V2__orders.sql" <<'SQL'
create table orders (id bigint primary key, customer_id bigint not null references customers, total numeric(12,2));
create index orders_customer on orders (customer_id);
SQL
cat > "$M/V3__events_at.sql" <<'SQL'
-- shardctl:no-transaction
create index concurrently events_at on events (at);
SQL
cat > "$M/V4__events_status.sql" <<'SQL'
alter table events add column status text;
SQL
cat > "$M/V5__views.sql" <<'SQL'
create function customer_total(c bigint) returns numeric language sql stable as $$ select coalesce(sum(total), 0) from orders where customer_id = c $$;
create view big_customers as select id, customer_total(id) as total from customers where customer_total(id) > 1000;
SQL

t0=$(now)
# The catalog for shardctl; the fleet's own 2 databases only tell where the shard clusters are.
"$bin/shardctl" sandbox fleet tool --dir "$work/sb" --empty --shards 2 --format json > "$work/fleet.json"
export SHARDCTL_CATALOG=$(jq -r .catalog "$work/fleet.json")
mapfile -t clusters < <(jq -r '.shards[].dsn' "$work/fleet.json" | sed 's/ *dbname=[^ ]*//' | sort -u)
# One seeded template per cluster; every shard database is a copy of it (CREATE DATABASE ... TEMPLATE).
for c in "${clusters[@]}"; do
  psql -Xq "$c dbname=postgres" -c "create database bench_tmpl"
  psql -Xq "$c dbname=bench_tmpl" <<'SQL'
create table events (id bigint primary key, payload text, at timestamptz);
insert into events select g, md5(g::text), now() - g * interval '1 second' from generate_series(1, 100000) g;
vacuum analyze events;
SQL
done
for set in loop xargs tool; do
  : > "$work/$set.dsns"
  for ((i = 1; i <= n; i++)); do
    c=${clusters[$((i % ${#clusters[@]}))]}
    psql -Xq "$c dbname=postgres" -c "create database ${set}_$i template bench_tmpl"
    echo "$c dbname=${set}_$i" >> "$work/$set.dsns"
    [ "$set" != tool ] || "$bin/shardctl" shard add "shard_$(printf %02d "$i")" --dsn "$c dbname=${set}_$i" >/dev/null
  done
done
echo "3 x $n databases with a 100k-row table each (copies of a seeded template), ready in $(r "$(now) - $t0") s"

apply_psql() {  # apply_psql DSN DIR: every file, in order, as an operator's shell loop does
  local f
  for f in "$2"/V*.sql; do
    if head -3 "$f" | grep -q 'shardctl:no-transaction'; then
      psql -X -q -v ON_ERROR_STOP=1 -f "$f" "$1" >/dev/null
    else
      psql -X -q -v ON_ERROR_STOP=1 -1 -f "$f" "$1" >/dev/null
    fi
  done
}
export -f apply_psql
# ls V*.sql sorts V1..V5 correctly here (single digits).
# Before each measurement: a checkpoint on every cluster, so no one pays for another's dirty pages.
settle() { for c in "${clusters[@]}"; do psql -Xq "$c dbname=postgres" -c checkpoint; done; sleep 1; }

settle
t0=$(now)
while read -r dsn; do apply_psql "$dsn" "$M"; done < "$work/loop.dsns"
loop=$(r "$(now) - $t0")

settle
t0=$(now)
xargs -a "$work/xargs.dsns" -d '\n' -P 8 -I{} bash -c 'apply_psql "$1" "$2"' _ {} "$M"
xargs8=$(r "$(now) - $t0")

settle
t0=$(now)
"$bin/shardctl" schema apply "$M" --parallel 8 -q --format json > "$work/apply.json"
tool=$(r "$(now) - $t0")
[ "$(jq -r '.summary.ok' "$work/apply.json")" = "$n" ] || { echo "shardctl apply did not succeed everywhere" >&2; exit 1; }

t0=$(now)
"$bin/shardctl" schema apply "$M" --parallel 8 -q > /dev/null
noop=$(r "$(now) - $t0")
t0=$(now)
"$bin/shardctl" schema status "$M" --parallel 8 > /dev/null
status=$(r "$(now) - $t0")

# All three did the same: every database has a valid events_at index and the view.
for f in loop xargs tool; do
  bad=0
  while read -r dsn; do
    [ "$(psql -XAtc "select (select indisvalid from pg_index where indexrelid = 'events_at'::regclass) and to_regclass('big_customers') is not null" "$dsn")" = t ] || bad=$((bad + 1))
  done < "$work/$f.dsns"
  [ "$bad" = 0 ] || { echo "$f: $bad database(s) lack the migrations" >&2; exit 1; }
done

echo "5 migrations on $n shard databases (wall time, s):"
printf '  %-34s %8s\n' "psql shell loop (one at a time)" "$loop" "psql loop, 8 at a time (xargs -P 8)" "$xargs8" \
  "shardctl schema apply --parallel 8" "$tool" "shardctl schema apply, nothing to do" "$noop" "shardctl schema status" "$status"
echo "  shardctl vs psql loop: $(r "$loop / $tool")x faster; vs xargs -P 8: $(r "$xargs8 / $tool")x"
