# Fleet-wide commands on a server with fewer connection slots than shard databases: a cluster
# of the test's own (max_connections = 20, superuser_reserved_connections = 3) holds 40 shard
# databases. check, query, schema apply, schema drift and stats collect exit 0 there while a
# loop on that server samples pg_stat_activity every 5 ms: shardctl's backends never pass
# --parallel (check: --parallel + 1, for its cross-shard probes; shardctl(1), CONNECTIONS),
# nor [defaults] max_connections_per_server when --parallel asks for more. Then other clients
# hold the slots: a command refused for too many clients (SQLSTATE 53300, "remaining connection
# slots are reserved" for a role that is no superuser, "sorry, too many clients already" for
# one) retries and succeeds once they let go; and while they keep them past the connect
# timeout, the shards are reported "refused", not "unreachable", with the exit codes of an
# unreachable shard.
source "$(dirname "$0")/lib.sh"

shards=40
parallel=4
max_conn=20

# --- the small cluster -----------------------------------------------------------------------
PG="$TEST_TMP/pg"
RUN="$TEST_TMP/run"
PORT=6499
server_user=${SHARDCTL_SANDBOX_USER:-postgres}
as_server() { if [ "$(id -u)" = 0 ]; then runuser -u "$server_user" -- "$@"; else "$@"; fi; }
mkdir -p "$PG" "$RUN"
[ "$(id -u)" != 0 ] || chown "$server_user" "$PG" "$RUN"
as_server initdb -D "$PG" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
# client_connection_check_interval: a holder's backend ends soon after its psql is killed.
as_server pg_ctl -D "$PG" -l "$PG/log" -w -o "-k $RUN -p $PORT -c listen_addresses='' -c fsync=off \
  -c max_connections=$max_conn -c superuser_reserved_connections=3 -c autovacuum=off \
  -c client_connection_check_interval=100ms" start >/dev/null
_stop_small() {
  local status=$?
  [ -z "${holders:-}" ] || kill $holders 2>/dev/null || true
  as_server pg_ctl -D "$PG" -m immediate -w stop >/dev/null 2>&1 || true
  (exit "$status")
  _drop_made_databases
}
trap _stop_small EXIT
SMALL="host=$RUN port=$PORT user=postgres"
psql -XAtq -v ON_ERROR_STOP=1 "$SMALL dbname=postgres" \
  -c "create role shardctl_read login" -c "grant pg_read_all_data to shardctl_read"

# --- the fleet: its catalog on the fixture's catalog cluster, 40 shards on the small cluster ----
step "fleet of $shards shard databases on a server of $max_conn slots"
fresh_fleet bounded --shards 1 --scale 0
# A child routed to another shard: check probes other shards for its parents.
psql_shard 1 -qc "create table referrals (customer_id bigint primary key references customers, referrer_id bigint not null)"
expect_exit 0 shardctl table add-sharded public.referrals --map customers --key customer_id
expect_exit 0 shardctl xref add referrals_referrer --child 'public.referrals(referrer_id)' \
  --parent 'public.customers(customer_id)' --route referrer_id --map customers
psql -XAtq -v ON_ERROR_STOP=1 "$SMALL dbname=postgres" -c "create database tmpl"
pg_dump --no-owner "$(shard_dsn 1)" | psql -XAtq -v ON_ERROR_STOP=1 "$SMALL dbname=tmpl" >/dev/null
for ((i = 1; i <= shards; i++)); do echo "create database s_$i template tmpl;"; done |
  psql -XAtq -v ON_ERROR_STOP=1 "$SMALL dbname=postgres"
# Ten customers each, their orders and lines, and referrals naming the next shard's customers.
for ((i = 1; i <= shards; i++)); do
  lo=$(((i - 1) * 10 + 1)) hi=$((i * 10)) next=$((i % shards * 10 + 1))
  cat <<SQL
\\c s_$i
insert into customers select c, 'customer ' || c, 1 + c % 8, now() from generate_series($lo, $hi) c;
insert into orders select c, o, now(), 'new' from generate_series($lo, $hi) c, generate_series(1, 3) o;
insert into order_lines select customer_id, order_id, 1, 1 + order_id, 1, 1.00 from orders;
insert into referrals select c, $next + (c - $lo) from generate_series($lo, $hi) c;
SQL
done | psql -XAtq -v ON_ERROR_STOP=1 "$SMALL dbname=postgres" >/dev/null
# register COUNT DSN_SUFFIX: the catalog's shards replaced by s_1..s_COUNT, one range
# of ten customers each on map customers (the first and last unbounded).
register() {
  psql_catalog -qAt <<SQL
begin;
delete from shardctl.mappings;
delete from shardctl.shards;
insert into shardctl.shards (name, dsn)
  select format('s%s', lpad(i::text, 2, '0')), format('$SMALL dbname=s_%s$2', i) from generate_series(1, $1) i;
insert into shardctl.mappings (map_id, shard_id, int_range)
  select m.map_id, s.shard_id, int8range(case when i = 1 then null else (i - 1) * 10 + 1 end,
                                          case when i = $1 then null else i * 10 + 1 end)
  from generate_series(1, $1) i join shardctl.shards s on s.name = format('s%s', lpad(i::text, 2, '0'))
  cross join (select map_id from shardctl.maps where name = 'customers') m;
commit;
SQL
}
register "$shards" ""
printf '[query]\nuser = "shardctl_read"\n' > "$TEST_TMP/shardctl.toml"
assert_eq "$(shardctl shard list --format json | jq '.shards | length')" "$shards"

# --- the sampler: shardctl's backends on the small server, every 5 ms --------------------------
psql -XAtq "$SMALL dbname=postgres" -c "create table samples (at float8, n int)"
psql -XAtq "$SMALL dbname=postgres application_name=sampler" -c "do \$\$ begin loop
    insert into samples select extract(epoch from clock_timestamp()), count(*) from pg_stat_activity
      where backend_type = 'client backend' and application_name like 'shardctl%';
    commit;
    perform pg_sleep(0.005);
  end loop; end \$\$" >/dev/null 2>&1 &
sampler=$!
now() { date +%s.%N; }
# peak T0 T1: the most shardctl backends sampled between T0 and T1.
peak() { psql -XAtq "$SMALL dbname=postgres" -c "select coalesce(max(n), 0) from samples where at between $1 and $2"; }
# bounded BOUND CMD...: CMD exits 0 and shardctl never held more than BOUND backends at once.
bounded() {
  local bound=$1; shift
  local t0 t1 p
  t0=$(now)
  expect_exit 0 shardctl "$@"
  t1=$(now)
  p=$(peak "$t0" "$t1")
  echo "# peak $p (bound $bound): shardctl $*"
  [ "$p" -le "$bound" ] || fail "shardctl $* held $p connections at once on one server; the bound is $bound"
  LAST_PEAK=$p
}

M="$TEST_TMP/migrations"
mkdir -p "$M"
echo "create table audit (id bigint generated always as identity primary key, customer_id bigint references customers);
create index audit_customer on audit (customer_id);" > "$M/V1__audit.sql"
echo "alter table orders add column note text;" > "$M/V2__note.sql"

step "every fleet-wide command within --parallel $parallel connections per server"
bounded $((parallel + 1)) check --parallel $parallel --format json
assert_eq "$(jq -r .status "$STDOUT")" ok
[ "$LAST_PEAK" -ge 2 ] || fail "check never held two connections at once: the sampler sees nothing"
bounded $parallel query "select count(*) from orders" --parallel $parallel --format csv
assert_eq "$(tail -n +2 "$STDOUT" | awk -F, '{t += $2} END {print t}')" $((shards * 30))
[ "$LAST_PEAK" -ge 2 ] || fail "query never held two connections at once: the sampler sees nothing"
bounded $parallel schema apply "$M" --parallel $parallel --format json
assert_eq "$(jq -r '[.shards[].state] | unique | join(",")' "$STDOUT")" ok
bounded $parallel schema drift --parallel $parallel
bounded $parallel schema status "$M" --parallel $parallel
bounded $parallel stats collect --parallel $parallel
bounded $parallel shard prepare --parallel $parallel

step "[defaults] max_connections_per_server lowers --parallel"
printf '[defaults]\nmax_connections_per_server = 3\n[query]\nuser = "shardctl_read"\n' > "$TEST_TMP/capped.toml"
bounded 3 query "select count(*) from orders" --parallel 16 -v --format csv -c "$TEST_TMP/capped.toml"
expect_stderr_contains "is above [defaults] max_connections_per_server = 3"
bounded 4 check --parallel 16 -c "$TEST_TMP/capped.toml"
bounded 3 schema drift --parallel 16 -c "$TEST_TMP/capped.toml"
kill "$sampler" 2>/dev/null || true
psql -XAtq "$SMALL dbname=postgres" -c "select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'sampler'" >/dev/null
wait "$sampler" 2>/dev/null || true

# --- other clients hold the slots ---------------------------------------------------------------
refusals() { grep -c -e "too many clients already" -e "remaining connection slots are reserved" "$PG/log" || true; }
# hold SECONDS USER: sessions of the superuser asleep for SECONDS ($holders, in the background),
# added one at a time until a connection as USER is refused for want of slots (a holder that
# lost a slot to that probe gives up, and another takes its place).
hold() {
  local seconds=$1 user=$2 k
  holders=""
  for ((k = 0; k < 2 * max_conn; k++)); do
    if ! psql -XAtq "host=$RUN port=$PORT user=$user dbname=postgres" -c "select 1" >/dev/null 2>"$TEST_TMP/probe.err"; then
      grep -q -e "too many clients" -e "connection slots are reserved" "$TEST_TMP/probe.err" && return 0
      fail "the probe failed otherwise: $(cat "$TEST_TMP/probe.err")"
    fi
    psql -XAtq "$SMALL dbname=postgres application_name=holder" -c "select pg_sleep($seconds)" >/dev/null 2>&1 &
    holders="$holders $!"
    sleep 0.05
  done
  fail "the holders never filled the server for $user"
}
# release: the holders killed; back once the server takes a connection again.
release() {
  local k
  kill $holders 2>/dev/null || true
  wait $holders 2>/dev/null || true
  holders=""
  for ((k = 0; k < 100; k++)); do
    psql -XAtq "$SMALL dbname=postgres" -c "select 1" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "the server stays full after the holders left"
}

# release_after SECONDS: the holders let go that much later, while a command waits for slots.
release_after() {
  (sleep "$1"; kill $holders 2>/dev/null) &
  releaser=$!
}

step "the slots a role may use are held, and freed 2 s later: query retries and succeeds"
hold 60 shardctl_read
before=$(refusals)
t0=$(now)
release_after 2
expect_exit 0 shardctl query "select count(*) from orders" --parallel 2 --connect-timeout 20 --format csv
waited=$(echo "$(now) - $t0" | bc)
wait "$releaser"
assert_eq "$(tail -n +2 "$STDOUT" | wc -l)" "$shards"
[ "$(refusals)" -gt "$before" ] || fail "no connection of query was refused: the slots were not held"
grep -q "remaining connection slots are reserved" "$PG/log" || fail "the server never said its slots are reserved"
echo "# query waited $waited s for slots, $(($(refusals) - before)) refusals"
release

step "every slot is held, and freed 2 s later: drift (as the superuser) retries and succeeds"
hold 60 postgres
before=$(refusals)
release_after 2
expect_exit 0 shardctl schema drift --parallel 2 --connect-timeout 20
wait "$releaser"
[ "$(refusals)" -gt "$before" ] || fail "no connection of drift was refused: the slots were not held"
grep -q "sorry, too many clients already" "$PG/log" || fail "the server never said it has too many clients"
release

step "the slots stay held past the connect timeout: refused, not unreachable"
# Three shards, each DSN with a connect timeout of 1 s (check has no --connect-timeout).
register 3 " connect_timeout=1"
hold 60 postgres
expect_exit 3 shardctl check --parallel 2 --format json
assert_eq "$(jq -r .status "$STDOUT")" unknown
assert_eq "$(jq -r '[.refused[].shard] | sort | join(",")' "$STDOUT")" "s01,s02,s03"
assert_eq "$(jq -r '.unreachable | length' "$STDOUT")" 0
jq -r '.refused[0].error' "$STDOUT" | grep -q "refused: too many connections" || fail "no refusal in: $(cat "$STDOUT")"
expect_exit 3 shardctl check --parallel 2
expect_stdout_contains "shard s01 refused: too many connections: "
expect_stdout_contains "0 unreachable, 3 refused: too many connections)"
expect_exit 3 shardctl check --parallel 2 --format nagios
expect_stdout_contains "SHARDCTL UNKNOWN - shard s01 refused: too many connections"
expect_exit 3 shardctl query "select 1" --parallel 2 --connect-timeout 1 --format json
assert_eq "$(jq -r '[.shards[].status] | unique | join(",")' "$STDOUT")" refused
expect_stderr_contains "refused"
expect_exit 3 shardctl schema status "$M" --parallel 2 --connect-timeout 1 --format json
assert_eq "$(jq -r '[.shards[].state] | unique | join(",")' "$STDOUT")" refused
expect_exit 69 shardctl schema apply "$M" --parallel 2 --connect-timeout 1 --format json
assert_eq "$(jq -r '[.shards[].state] | unique | join(",")' "$STDOUT")" refused
expect_exit 3 shardctl schema drift --parallel 2 --connect-timeout 1
expect_stdout_contains "refused"
expect_exit 69 shardctl stats collect --parallel 2 --connect-timeout 1
expect_stderr_contains "refused: too many connections"
release

step "the slots free again: the whole fleet is checked"
register "$shards" ""
expect_exit 0 shardctl check --parallel 2
