#!/usr/bin/env bash
# Benchmark: every fleet-wide command on SHARDS shard databases (default 1,024) on the sandbox's
# two shard clusters, each restarted with max_connections = 300, beside the `xargs -P8 psql` loop
# an operator would otherwise write. Autovacuum is off on those clusters, so that no background
# worker visits thousands of databases during the timings (the fill ANALYZEs what it loads).
#
# Every shard database is a clone of a template (CREATE DATABASE ... TEMPLATE ... STRATEGY
# FILE_COPY) of the sample schema (shardctl sandbox fleet), filled with its own 20 customers
# (~100 orders, ~300 order lines) and 20 referrals whose referrer is a customer of the next shard:
# an xref across shards, so that `check` probes other shards. The shards are registered in the
# catalog by SQL, in one transaction (a `shard add` per shard takes minutes at 4,096), with a
# range map over customer_id whose first and last ranges are unbounded.
#
# Measured, in this order, each at --parallel PARALLEL (default 8), every command must exit 0:
#   check          shardctl check (every kind)               xargs: the orphan anti-join per shard
#   query          shardctl query 'select count(*) ...'     xargs: psql -c, the same statement
#   stats collect  shardctl stats collect                    xargs: database size and rows per key
#   schema apply   shardctl schema apply DIR, two files      xargs: psql -1 -f, one file like the first
#   schema drift   shardctl schema drift                     xargs: one structure query per shard
# For each: wall time, client CPU (user+sys of shardctl; of xargs with its psql processes), the
# servers' CPU (their exited backends'), all also per shard, and the peak number of client
# backends on each shard cluster, sampled every
# 10 ms by a loop running on that server (shardctl's backends by their application_name
# shardctl*, psql's by psql; the sampler's own backend is not counted).
# Usage: bench/fleet_scale.sh [BIN_DIR] [SHARDS] [PARALLEL]
source "$(dirname "$0")/lib.sh" "${1:-}"
n=${2:-1024}
parallel=${3:-8}
per_shard=20  # customers per shard
for _pg_bin in $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1); do PATH="$_pg_bin:$PATH"; done

sandbox_up --no-fleet
"$bin/shardctl" sandbox status --dir "$work/sb" --format json > "$work/status.json"
sock=$(jq -r .socket_dir "$work/status.json")
mapfile -t ports < <(jq -r '.clusters[] | select(.name != "catalog") | .port' "$work/status.json")
mapfile -t datas < <(jq -r '.clusters[] | select(.name != "catalog") | .data_dir' "$work/status.json")
server() { echo "host=$sock port=${ports[$1]} user=postgres"; }
as_server_user() { if [ "$(id -u)" = 0 ]; then runuser -u "${SHARDCTL_SANDBOX_USER:-postgres}" -- "$@"; else "$@"; fi; }

# The shard clusters again with the fleet's limits: the options they run with (postmaster.opts),
# max_connections and autovacuum added (the last -c of a setting wins).
for k in 0 1; do
  opts=$(sed 's/^[^ ]* //' "${datas[k]}/postmaster.opts")
  as_server_user pg_ctl -D "${datas[k]}" -l "${datas[k]}/bench.log" -w -m fast restart \
    -o "$opts -c max_connections=300 -c autovacuum=off" >/dev/null
done

# The template: the sample schema with reference rows, no customers (scale 0), prepared by
# shardctl; plus the referrals table. fs_shard_1 lives on the first shard cluster, fs_shard_2 on
# the second.
t0=$(now)
"$bin/shardctl" sandbox fleet fs --dir "$work/sb" --shards 2 --scale 0 --format json > "$work/fs.json"
export SHARDCTL_CATALOG
SHARDCTL_CATALOG=$(jq -r .catalog "$work/fs.json")
for k in 0 1; do
  psql -XAtq -v ON_ERROR_STOP=1 "$(server $k) dbname=fs_shard_$((k + 1))" \
    -c "create table referrals (customer_id bigint primary key references customers, referrer_id bigint not null)"
done
"$bin/shardctl" table add-sharded public.referrals --map customers --key customer_id -q
"$bin/shardctl" xref add referrals_referrer --child 'public.referrals(referrer_id)' --parent 'public.customers(customer_id)' \
  --route referrer_id --map customers -q

# The shard databases: shard i on cluster (i - 1) % 2, as the sandbox places them.
for k in 0 1; do
  for ((i = k + 1; i <= n; i += 2)); do echo "CREATE DATABASE fs_$i TEMPLATE fs_shard_$((k + 1)) STRATEGY FILE_COPY;"; done |
    psql -XAtq -v ON_ERROR_STOP=1 "$(server $k) dbname=postgres" &
done
wait
echo "created $n shard databases in $(r "$(now) - $t0") s"

# Fill: one psql per cluster going from database to database (\c).
t0=$(now)
for k in 0 1; do
  for ((i = k + 1; i <= n; i += 2)); do
    lo=$(((i - 1) * per_shard + 1)) hi=$((i * per_shard)) next=$((i % n * per_shard + 1))
    cat <<SQL
\\c fs_$i
BEGIN;
INSERT INTO customers SELECT c, 'customer ' || c, 1 + c % 8, timestamptz '2024-01-01 00:00+00' + (c % 365) * interval '1 day'
  FROM generate_series($lo, $hi) c;
INSERT INTO orders SELECT c, o, timestamptz '2024-01-01 00:00+00' + ((c * 31 + o * 7) % 700) * interval '1 day',
  (ARRAY['new', 'paid', 'shipped', 'delivered'])[1 + (c + o) % 4] FROM generate_series($lo, $hi) c, generate_series(1, 1 + (c % 9)::int) o;
INSERT INTO order_lines SELECT o.customer_id, o.order_id, l, p, q, q * (1 + ((p * 7919) % 10000) / 100.0)
  FROM orders o, generate_series(1, 1 + ((o.customer_id + o.order_id) % 5)::int) l,
  LATERAL (SELECT 1 + ((o.customer_id * 13 + o.order_id * 17 + l) % 200)::int AS p, 1 + ((o.customer_id + l) % 5)::int AS q) x;
INSERT INTO referrals SELECT c, $next + (c - $lo) FROM generate_series($lo, $hi) c;
COMMIT;
ANALYZE customers, orders, order_lines, referrals;
SQL
  done | psql -XAtq -v ON_ERROR_STOP=1 "$(server $k) dbname=postgres" &
done
wait
echo "filled them ($per_shard customers each) in $(r "$(now) - $t0") s"

# Registration, in one catalog transaction.
psql -XAtq -v ON_ERROR_STOP=1 "$SHARDCTL_CATALOG" <<SQL
BEGIN;
DELETE FROM shardctl.mappings;
DELETE FROM shardctl.shards;
INSERT INTO shardctl.shards (name, dsn)
  SELECT format('s%s', lpad(i::text, 4, '0')),
         format('host=%s port=%s user=postgres dbname=fs_%s', '$sock', CASE WHEN i % 2 = 1 THEN ${ports[0]} ELSE ${ports[1]} END, i)
  FROM generate_series(1, $n) i;
INSERT INTO shardctl.mappings (map_id, shard_id, int_range)
  SELECT m.map_id, s.shard_id,
         int8range(CASE WHEN i = 1 THEN NULL ELSE (i - 1) * $per_shard + 1 END, CASE WHEN i = $n THEN NULL ELSE i * $per_shard + 1 END)
  FROM generate_series(1, $n) i
  JOIN shardctl.shards s ON s.name = format('s%s', lpad(i::text, 4, '0'))
  CROSS JOIN (SELECT map_id FROM shardctl.maps WHERE name = 'customers') m;
COMMIT;
SQL
cat > "$work/shardctl.toml" <<TOML
catalog = "$SHARDCTL_CATALOG"
[query]
user = "shardctl_read"
TOML
export SHARDCTL_CONFIG=$work/shardctl.toml
"$bin/shardctl" shard list --format json > "$work/shards.json"
[ "$(jq ".shards | length" "$work/shards.json")" = "$n" ] || { echo "expected $n shards in the catalog" >&2; head -c 600 "$work/shards.json" >&2; exit 1; }

# The samplers: one loop per shard cluster, a row every 10 ms (its transaction commits each
# time, so pg_stat_activity is read afresh).
for k in 0 1; do
  psql -XAtq "$(server $k) dbname=postgres" -c "CREATE TABLE bench_samples (at float8, shardctl int, psql int)"
  psql -XAtq "$(server $k) dbname=postgres application_name=bench_sampler" -c "DO \$\$ BEGIN LOOP
      INSERT INTO bench_samples SELECT extract(epoch FROM clock_timestamp()),
        count(*) FILTER (WHERE application_name LIKE 'shardctl%'), count(*) FILTER (WHERE application_name = 'psql')
        FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid();
      COMMIT;
      PERFORM pg_sleep(0.01);
    END LOOP; END \$\$" >/dev/null 2>&1 &
done
stop_samplers() {
  for k in 0 1; do
    psql -XAtq "$(server $k) dbname=postgres" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bench_sampler'" >/dev/null
  done
  wait
}
# peak T0 T1 COLUMN: the highest sample of COLUMN on each cluster between T0 and T1, as "A/B".
peak() {
  local k out=()
  for k in 0 1; do
    out+=("$(psql -XAtq "$(server $k) dbname=postgres" -c "SELECT coalesce(max($3), 0) FROM bench_samples WHERE at BETWEEN $1 AND $2")")
  done
  echo "${out[0]}/${out[1]}"
}

# CPU seconds the shard clusters' exited backends used so far (reaped into their postmasters'
# cutime and cstime): what a command cost the servers, the long-lived samplers left out.
hz=$(getconf CLK_TCK)
server_cpu() {
  local k pid ticks=0
  for k in 0 1; do
    pid=$(head -1 "${datas[k]}/postmaster.pid")
    ticks=$((ticks + $(awk '{print $16 + $17}' "/proc/$pid/stat")))
  done
  echo "$ticks"
}

# The DSNs of the shards, for xargs.
jq -r ".shards[].dsn" "$work/shards.json" > "$work/dsns"

M="$work/migrations"
mkdir -p "$M"
cat > "$M/V1__audit.sql" <<'SQL'
create table audit (id bigint generated always as identity primary key, customer_id bigint not null references customers,
  at timestamptz not null default now(), what text not null);
create index audit_customer on audit (customer_id, at);
SQL
cat > "$M/V2__orders_note.sql" <<'SQL'
alter table orders add column note text;
create index orders_status on orders (status);
SQL
sed 's/audit/audit_x/g' "$M/V1__audit.sql" > "$work/X1.sql"

declare -A cmd_x=(
  [check]="psql -XAtq -c 'select count(*) from order_lines l where not exists (select 1 from orders o where o.customer_id = l.customer_id and o.order_id = l.order_id)'"
  [query]="psql -XAtq -c 'select count(*) from orders'"
  [stats]="psql -XAtq -c 'select pg_database_size(current_database()), (select count(*) from (select customer_id, count(*) from orders group by 1) s)'"
  [apply]="psql -X -q -1 -v ON_ERROR_STOP=1 -f $work/X1.sql"
  [drift]="psql -XAtq -c \"select md5(string_agg(d, ',' order by d)) from (
     select format('%s.%s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod), pg_get_expr(ad.adbin, ad.adrelid)) d
       from pg_attribute a join pg_class c on c.oid = a.attrelid left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
      where c.relnamespace = 'public'::regnamespace and a.attnum > 0 and not a.attisdropped
     union all select pg_get_indexdef(indexrelid) from pg_index where indrelid::regclass::text not like 'pg_%'
     union all select pg_get_constraintdef(oid) from pg_constraint where connamespace = 'public'::regnamespace) s\""
)
declare -A cmd_s=(
  [check]="check --parallel $parallel --format json"
  [query]="query 'select count(*) from orders' --parallel $parallel --format csv"
  [stats]="stats collect --parallel $parallel"
  [apply]="schema apply $M --parallel $parallel"
  [drift]="schema drift --parallel $parallel"
)

rows=()
for c in check query stats apply drift; do
  # shardctl
  t0=$(now)
  c0=$(server_cpu)
  rc=0
  eval "/usr/bin/time -f '%e %U %S' -o '$work/time' '$bin/shardctl' ${cmd_s[$c]}" > "$work/$c.out" 2> "$work/$c.err" || rc=$?
  t1=$(now)
  scpu=$(r "($(server_cpu) - $c0) / $hz")
  read -r wall user sys < <(tail -1 "$work/time")
  speak=$(peak "$t0" "$t1" shardctl)
  # xargs -P8 psql: user=shardctl_read for the query, as shardctl's [query] user
  sed_user=cat
  [ "$c" != query ] || sed_user="sed s/user=postgres/user=shardctl_read/"
  t0=$(now)
  c0=$(server_cpu)
  xrc=0
  $sed_user < "$work/dsns" | eval "/usr/bin/time -f '%e %U %S' -o '$work/xtime' xargs -P$parallel -d '\n' -I{} ${cmd_x[$c]} '{}'" \
    > "$work/$c.xout" 2> "$work/$c.xerr" || xrc=$?
  t1=$(now)
  xscpu=$(r "($(server_cpu) - $c0) / $hz")
  read -r xwall xuser xsys < <(tail -1 "$work/xtime")
  xpeak=$(peak "$t0" "$t1" psql)
  files=1
  [ "$c" != apply ] || files=2
  line=$(printf "| %s | %s | %.2f | %.2f | %.2f s = %.2f ms/shard | %.2f ms/shard | %s | %.2f | %.2f | %.2f + %.2f ms/shard | %s | %.2f |" \
    "$c" "$rc" "$wall" "$(r "1000 * $wall / $n")" "$(r "$user + $sys")" "$(r "1000 * ($user + $sys) / $n")" \
    "$(r "1000 * $scpu / $n")" "$speak" "$xwall" "$(r "1000 * $xwall / $n")" "$(r "1000 * ($xuser + $xsys) / $n")" \
    "$(r "1000 * $xscpu / $n")" "$xpeak" "$(r "($wall / $files) / $xwall")")
  rows+=("$line")
  echo "$line"
  [ "$rc" = 0 ] || { echo "shardctl $c exited $rc:" >&2; head -c 3000 "$work/$c.err" >&2; }
  [ "$xrc" = 0 ] || { echo "xargs $c exited $xrc:" >&2; head -c 3000 "$work/$c.xerr" >&2; }
done
stop_samplers

echo
echo "$n shard databases on 2 clusters (max_connections 300), --parallel $parallel, $(nproc) cores; $("$bin/shardctl" --version)"
echo "| command | exit | wall s | ms/shard | client CPU | server CPU | peak backends (cluster 1/2) | xargs -P$parallel psql wall s | xargs ms/shard | xargs CPU client + server | xargs peak | ratio (per file) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
