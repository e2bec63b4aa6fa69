# Sourced (after lib.sh) by the tests of the Python reference client (t_client_*.sh,
# t_pgbouncer_*.sh, t_routing_writers*.sh).
#   CLIENT_PY            Debian's python3, which has python3-psycopg and python3-psycopg-pool
#                        (the first python3 on PATH may be another); a test skips without them
#   client_py ARGS...    runs it with clients/python on PYTHONPATH
#   shardside_present I  succeeds when shard I has the shard side of the routing contract
#                        (shardctl.assert_route), which the refusal assertions need
#   contract_pending WHAT  an assertion that could not run because a shard lacks the shard
#                        side: a failure (every shard of a test fleet is prepared); client_done
#                        ends the test
CLIENT_PY=${SHARDCTL_CLIENT_PYTHON:-/usr/bin/python3}
CLIENT_DIR="$SHARDCTL_SOURCE_DIR/clients/python"
[ -x "$CLIENT_PY" ] && "$CLIENT_PY" -c 'import psycopg, psycopg_pool' 2>/dev/null ||
  skip "$CLIENT_PY lacks psycopg / psycopg_pool (Debian: python3-psycopg python3-psycopg-pool; scripts/install-deps.sh)"
client_py() { PYTHONPATH="$CLIENT_DIR${PYTHONPATH:+:$PYTHONPATH}" "$CLIENT_PY" "$@"; }

shardside_present() {
  [ "$(psql_shard "$1" -XAtc "select to_regprocedure('shardctl.assert_route(text,bigint)') is not null")" = t ]
}
contract_pending() { fail "a shard lacks the shard side of the routing contract (shardctl shard prepare), so this did not run: $1"; }
client_done() { pass; }

# pgbouncer_start DIR PORT: a PgBouncer (/usr/sbin/pgbouncer, 1.18 on bookworm) in front of
# every shard of the fleet: transaction pooling, one server connection per database
# (default_pool_size 1: two clients share it), a unix socket in DIR and no TCP listener,
# auth_type trust. As root it runs as the sandbox's user (PgBouncer refuses root), as
# PostgreSQL does in the sandbox. Database NAME of it is shard NAME. PGB_DSN_PREFIX: the DSN
# of it without dbname; pgbouncer_stop stops it.
PGB_BIN=${SHARDCTL_PGBOUNCER:-/usr/sbin/pgbouncer}
pgbouncer_start() {
  local dir=$1 port=$2 i n user
  [ -x "$PGB_BIN" ] || skip "no PgBouncer at $PGB_BIN (Debian: pgbouncer; scripts/install-deps.sh)"
  user=$(id -un)
  [ "$(id -u)" -ne 0 ] || user=${SHARDCTL_SANDBOX_USER:-postgres}
  mkdir -p "$dir"
  n=$(fleet_shards)
  {
    echo "[databases]"
    for ((i = 1; i <= n; i++)); do echo "$(shard_name "$i") = $(shard_dsn "$i")"; done
    echo "catalog = $SHARDCTL_CATALOG"
    cat <<CONF
[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = postgres
pool_mode = transaction
default_pool_size = 1
max_client_conn = 200
ignore_startup_parameters = extra_float_digits,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
CONF
  } > "$dir/pgbouncer.ini"
  printf '"postgres" ""\n"%s" ""\n' "$user" > "$dir/userlist.txt"
  if [ "$(id -u)" -eq 0 ]; then
    chown -R "$user" "$dir"
    runuser -u "$user" -- "$PGB_BIN" -d "$dir/pgbouncer.ini" >"$dir/start.out" 2>&1 || { cat "$dir/start.out" "$dir/pgbouncer.log" >&2; fail "pgbouncer did not start"; }
  else
    "$PGB_BIN" -d "$dir/pgbouncer.ini" >"$dir/start.out" 2>&1 || { cat "$dir/start.out" "$dir/pgbouncer.log" >&2; fail "pgbouncer did not start"; }
  fi
  PGB_DIR=$dir
  PGB_DSN_PREFIX="host=$dir port=$port user=postgres"
  wait_until "pgbouncer to accept connections" sql_true "$PGB_DSN_PREFIX dbname=$(shard_name 1)" "select true"
}
pgbouncer_stop() {
  [ -n "${PGB_DIR:-}" ] && [ -f "$PGB_DIR/pgbouncer.pid" ] || return 0
  kill "$(cat "$PGB_DIR/pgbouncer.pid")" 2>/dev/null || true
  PGB_DIR=""
}
# set_app_dsn SHARD DSN: the address applications use for SHARD (`shardctl shard set --app-dsn`
# where this build has it, else the catalog column itself).
set_app_dsn() {
  if "$SHARDCTL_BIN/shardctl" shard set --help 2>/dev/null | grep -q -- '--app-dsn'; then
    "$SHARDCTL_BIN/shardctl" shard set "$1" --app-dsn "$2" >/dev/null
  else
    psql_catalog -qc "update shardctl.shards set app_dsn = '$2' where name = '$1'" >/dev/null
  fi
}
