# Sourced by every integration test (tests/integration/t_*.sh). CTest provides:
#   SHARDCTL_BIN           the build's bin directory (shardctl and shardctl-* binaries)
#   SHARDCTL_TEST_SANDBOX  the sandbox whose clusters the fixture started for this run
#   SHARDCTL_TEST_TMP      scratch space; each test gets its own directory below it
#   SHARDCTL_SOURCE_DIR    the source tree
set -euo pipefail

# run_cxx_test.sh names its test (the C++ binary) before it sources this file.
TEST_NAME=${TEST_NAME:-$(basename "$0" .sh)}
TEST_TMP="$SHARDCTL_TEST_TMP/$TEST_NAME"
rm -rf "$TEST_TMP"
mkdir -p "$TEST_TMP"
chmod 755 "$SHARDCTL_TEST_TMP" "$TEST_TMP"
STDOUT="$TEST_TMP/stdout"
STDERR="$TEST_TMP/stderr"
# Tests must not pick up a config file from wherever ctest runs, nor the operator's own.
cd "$TEST_TMP"
unset SHARDCTL_CONFIG SHARDCTL_CATALOG PGHOST PGPORT PGDATABASE PGUSER
export XDG_CONFIG_HOME="$TEST_TMP/xdg"

# PostgreSQL's client programs themselves (psql, pg_dump, ...), newest version first, not
# Debian's pg_wrapper in /usr/bin: a perl script that costs 0.1-0.2 s a call on a busy machine,
# and the suite calls psql tens of thousands of times.
for _pg_bin in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1); do PATH="$_pg_bin:$PATH"; done

shardctl() { "$SHARDCTL_BIN/shardctl" "$@"; }

# step "NAME": names the case that follows, so that a failure says which case it is in (as
# git's test_expect_success and ccache's TEST do). Every failure also names the test file's
# line: the line that called the failing helper, or the command that failed under set -e.
TEST_STEP=""
step() {
  TEST_STEP=$1
  echo "# $TEST_NAME: $1"
}
_in_step() { [ -z "$TEST_STEP" ] || printf ' step "%s"' "$TEST_STEP"; }

# The test file's line that led to the current lib.sh function (a test's own helper that calls
# fail is named, with the test's top-level line that called it when that differs).
_test_line() {
  local i n=${#BASH_SOURCE[@]} first="" top=""
  for ((i = 1; i < n; i++)); do
    [ "${BASH_SOURCE[i]}" != "${BASH_SOURCE[0]}" ] || continue
    [ -n "$first" ] || first="$(basename "${BASH_SOURCE[i]}"):${BASH_LINENO[i - 1]}"
    top="$(basename "${BASH_SOURCE[i]}"):${BASH_LINENO[i - 1]}"
  done
  [ "$top" = "$first" ] || first="$first (from $top)"
  echo "${first:-$(basename "$0")}"
}

fail() {
  echo "FAIL [$TEST_NAME]$(_in_step) at $(_test_line): $*" >&2
  exit 1
}

# A command that fails outside any condition ends the test (set -e); say which and where
# instead of ending silently. With set +e in effect a failure is the test's to handle.
_on_error() {
  local status=$1 file=$2 line=$3 command=$4
  [[ $- == *e* ]] && [ -z "${_error_named:-}" ] || return 0
  _error_named=1   # the compound commands around it fail again on the way out
  echo "FAIL [$TEST_NAME]$(_in_step) at $(basename "$file"):$line: exit $status from: $command" >&2
}
trap '_on_error $? "${BASH_SOURCE[0]}" "$LINENO" "$BASH_COMMAND"' ERR

# The socket directory and ports of the fixture's clusters.
SANDBOX_RUN="$SHARDCTL_TEST_SANDBOX/run"
CATALOG_CLUSTER="host=$SANDBOX_RUN port=6400 user=postgres"

# The databases this test made (one DSN a line), dropped when it passes. A run makes thousands
# (a crash matrix makes a fleet per chain), and left in place they make every later CREATE
# DATABASE, the clusters' shutdown and their removal slower. A failed test keeps them to be
# looked at. A test that sets its own EXIT trap keeps its databases (they go with the clusters).
MADE_DATABASES="$TEST_TMP/made_databases"
_drop_made_databases() {
  local status=$? dsn db
  if [ "$status" = 0 ] && [ -f "$MADE_DATABASES" ]; then
    while read -r dsn; do
      db=${dsn##*dbname=}
      db=${db%% *}
      psql -X -q "${dsn%%dbname=*}dbname=postgres" -c "drop database if exists \"$db\" with (force)" >/dev/null 2>&1 || true
    done < "$MADE_DATABASES"
  fi
  return "$status"
}
trap _drop_made_databases EXIT

# A unique name per test (and per call), so tests never share databases.
# (Sets UNIQUE_NAME rather than printing it: a $(...) subshell would lose the counter.)
_fleet_seq=0
_unique() { _fleet_seq=$((_fleet_seq + 1)); UNIQUE_NAME="${1}_$$_${_fleet_seq}"; }

# fresh_fleet NAME [--empty] [--shards N] [--scale S]: new catalog + shard databases on the
# fixture clusters; exports SHARDCTL_CATALOG and FLEET_JSON (the fleet's DSNs).
fresh_fleet() {
  _unique "$1"; shift
  local name=$UNIQUE_NAME
  FLEET_JSON="$TEST_TMP/fleet_$name.json"
  "$SHARDCTL_BIN/shardctl" sandbox fleet "$name" --dir "$SHARDCTL_TEST_SANDBOX" --format json "$@" > "$FLEET_JSON" ||
    fail "could not create fleet $name"
  _fleet_load
  SHARDCTL_CATALOG=$_fleet_catalog
  export SHARDCTL_CATALOG FLEET_JSON
  printf '%s\n' "$_fleet_catalog" "${_fleet_dsns[@]}" >> "$MADE_DATABASES"
}

# The fleet in $FLEET_JSON (written once by `sandbox fleet`), read with one jq call and kept in
# this shell: shard_dsn runs before nearly every psql of a test, and a jq a call was a fifth of
# the release suite's CPU (tests/README.md, "Time"). A test that points FLEET_JSON at another
# fleet's file gets that file read on first use.
_fleet_cached=""
_fleet_load() {
  [ "$_fleet_cached" = "$FLEET_JSON" ] && return 0
  local lines
  mapfile -t lines < <(jq -r '.catalog, (.shards[] | .name, .dsn)' "$FLEET_JSON")
  [ ${#lines[@]} -ge 1 ] || fail "no fleet in $FLEET_JSON"
  _fleet_catalog=${lines[0]}
  _fleet_names=() _fleet_dsns=()
  local i
  for ((i = 1; i + 1 < ${#lines[@]}; i += 2)); do
    _fleet_names+=("${lines[i]}")
    _fleet_dsns+=("${lines[i + 1]}")
  done
  _fleet_cached=$FLEET_JSON
}
# fleet_shards: how many shards the fleet has; shard_name I, shard_dsn I: its I-th (from 1).
fleet_shards() { _fleet_load; echo "${#_fleet_dsns[@]}"; }
shard_name() { _fleet_load; echo "${_fleet_names[$1 - 1]}"; }

# fresh_database NAME: an empty database (no catalog schema) on the catalog cluster.
fresh_database() {
  _unique "$1"
  local name=$UNIQUE_NAME
  psql -X -q -v ON_ERROR_STOP=1 "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$name\"" >/dev/null
  export SHARDCTL_CATALOG="$CATALOG_CLUSTER dbname=$name"
  echo "$SHARDCTL_CATALOG" >> "$MADE_DATABASES"
}

shard_dsn() { _fleet_load; echo "${_fleet_dsns[$1 - 1]}"; }
psql_catalog() { psql -X -v ON_ERROR_STOP=1 "$SHARDCTL_CATALOG" "$@"; }
psql_shard() { local n=$1; shift; _fleet_load; psql -X -v ON_ERROR_STOP=1 "${_fleet_dsns[n - 1]}" "$@"; }

# private_fleet NAME SHARDS SCALE: a fleet on clusters of the test's own (a sandbox in
# $PRIVATE_SANDBOX, taken down on exit), for a test that stops servers without disturbing
# the others; exports SHARDCTL_CATALOG and FLEET_JSON. stop_cluster CLUSTER stops one of its
# clusters hard, as a crash would; `shardctl sandbox up --dir "$PRIVATE_SANDBOX" --no-fleet`
# starts it again.
private_fleet() {
  PRIVATE_SANDBOX="$TEST_TMP/sb"
  trap 'shardctl sandbox down --dir "$PRIVATE_SANDBOX" >/dev/null 2>&1 || true' EXIT
  shardctl sandbox up --dir "$PRIVATE_SANDBOX" --no-fleet -q >/dev/null
  FLEET_JSON="$TEST_TMP/fleet.json"
  shardctl sandbox fleet "$1" --dir "$PRIVATE_SANDBOX" --shards "$2" --scale "$3" --format json > "$FLEET_JSON"
  SHARDCTL_CATALOG=$(jq -r .catalog "$FLEET_JSON")
  export SHARDCTL_CATALOG FLEET_JSON
}
stop_cluster() {
  local pg_ctl
  pg_ctl=$(dirname "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb | tail -1)")/pg_ctl
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "${SHARDCTL_SANDBOX_USER:-postgres}" -- "$pg_ctl" -D "$PRIVATE_SANDBOX/$1" -m immediate stop >/dev/null
  else
    "$pg_ctl" -D "$PRIVATE_SANDBOX/$1" -m immediate stop >/dev/null
  fi
}

# shardctl_streams I: the names of shardctl's publications, slots and subscriptions (online
# moves) in shard I's database, and of what records a stream's keys there (the trigger
# shardctl_stream_keys as "trigger:TABLE", a watch or recorded key as "record:STREAM"),
# space-separated; empty when there are none. Slots and subscriptions are listed cluster-wide by
# the server: only this database's count.
shardctl_streams() {
  psql_shard "$1" -XAtc "select coalesce(string_agg(n, ' ' order by n), '') from (
    select pubname n from pg_publication where pubname like 'shardctl_op_%'
    union all select slot_name from pg_replication_slots where database = current_database() and slot_name like 'shardctl_op_%'
    union all select subname from pg_subscription
               where subdbid = (select oid from pg_database where datname = current_database()) and subname like 'shardctl_op_%'
    union all select 'trigger:' || tgrelid::regclass::text from pg_trigger where tgname = 'shardctl_stream_keys' and tgparentid = 0
    union all select distinct 'record:' || x from unnest(case when to_regclass('shardctl.stream_watch') is null then '{}'::text[]
      else xpath('//stream/text()', query_to_xml('select stream from shardctl.stream_watch union all select stream from shardctl.stream_keys',
                                                 false, false, ''))::text[] end) x) o"
}

# The catalog's contents, for "nothing changed" checks.
catalog_dump() {
  pg_dump --data-only --schema=shardctl --no-owner --inserts "$SHARDCTL_CATALOG" | grep -v -e '^--' -e '^SET ' -e '^SELECT pg_catalog' -e '^$' -e '^\\restrict' -e '^\\unrestrict'
}

# expect_exit CODE CMD...: runs CMD, keeps its stdout/stderr in $STDOUT/$STDERR, and fails the
# test (showing both) unless it exits with CODE.
expect_exit() {
  local want=$1; shift
  local got=0
  "$@" >"$STDOUT" 2>"$STDERR" || got=$?
  if [ "$got" != "$want" ]; then
    echo "--- stdout:" >&2; head -c 4000 "$STDOUT" >&2
    echo "--- stderr:" >&2; head -c 4000 "$STDERR" >&2
    fail "expected exit $want, got $got: $*"
  fi
}

expect_stdout_contains() { grep -qF -- "$1" "$STDOUT" || { cat "$STDOUT" >&2; fail "stdout lacks: $1"; }; }
expect_stderr_contains() { grep -qF -- "$1" "$STDERR" || { cat "$STDERR" >&2; fail "stderr lacks: $1"; }; }
assert_eq() { [ "$1" == "$2" ] || fail "expected [$2], got [$1]"; }
assert_contains() { [[ "$1" == *"$2"* ]] || fail "expected to find [$2] in [$1]"; }

pass() { echo "ok - $TEST_NAME"; }
# skip WHY: the test could not run (all or part of it) here, and says why; CTest reports exit
# 77 as skipped (SKIP_RETURN_CODE), never as passed.
skip() {
  echo "skip - $TEST_NAME: $1"
  exit 77
}
# needs_root WHY: skipped, saying why, unless run as root (CI runs the suite as root).
needs_root() { [ "$(id -u)" -eq 0 ] || skip "$1"; }

# --- fleet-wide data checks (migration tests) ---------------------------------------------

# Every row of every sample table across the fleet, as an order-independent fingerprint per
# table: row count and the sum of a 64-bit hash of each row's text. Equal before and after a
# migration means no row was lost, duplicated or changed.
fleet_fingerprint() {
  local n i values=""
  n=$(fleet_shards)
  for ((i = 1; i <= n; i++)); do
    while IFS='|' read -r t c h; do values+="${values:+,}('$t', $c, $h)"; done < <(psql_shard "$i" -XAt <<'SQL'
select t, count(*), coalesce(sum(('x' || substr(md5(r), 1, 16))::bit(64)::bigint::numeric), 0)
from (select 'customers' t, x::text r from public.customers x
      union all select 'orders', x::text from public.orders x
      union all select 'order_lines', x::text from public.order_lines x) a
group by t
SQL
)
  done
  # Exact sums (numeric), not a shell's floating point.
  psql_catalog -XAtc "select t || ' ' || sum(c) || ' ' || sum(h) from (values $values) v(t, c, h) group by t order by t"
}

# Fails unless every row of every sample table sits on the shard the map routes its key to,
# no mapping is offline, and no write guard is left on any shard.
assert_fleet_consistent() {
  local n i name wrong
  n=$(fleet_shards)
  for ((i = 1; i <= n; i++)); do
    name=$(shard_name "$i")
    psql_shard "$i" -XAtc "select customer_id from public.customers union select customer_id from public.orders
                           union select customer_id from public.order_lines" > "$TEST_TMP/keys.$i"
    wrong=$("$SHARDCTL_BIN/shardctl" lookup --map customers - < "$TEST_TMP/keys.$i" 2>/dev/null | awk -F'\t' -v s="$name" '$2 != s' | head -3)
    [ -z "$wrong" ] || fail "rows on $name that the map routes elsewhere: $wrong"
    # Fences (writes refused to keys a shard gave away) stay by design; offline ranges must
    # not. (The sample fleet has one map: the guard's triggers need some range of it on the
    # shard; without one, its route floor, which never goes, keeps the light trigger
    # shardctl_guard_route alone on each of the map's tables, lib/migrate/guard.hpp.)
    local ranges=0 offline=0 floors=0 floor_maps=""
    if [ "$(psql_shard "$i" -XAtc "select to_regclass('shardctl.guard_ranges') is not null")" = t ]; then
      ranges=$(psql_shard "$i" -XAtc "select count(*) from shardctl.guard_ranges")
      offline=$(psql_shard "$i" -XAtc "select count(*) from shardctl.guard_ranges where state <> 'fenced'")
    fi
    if [ "$(psql_shard "$i" -XAtc "select to_regclass('shardctl.route_floors') is not null")" = t ]; then
      floors=$(psql_shard "$i" -XAtc "select count(*) from shardctl.route_floors")
      floor_maps=$(psql_shard "$i" -XAtc "select coalesce(string_agg(map_id::text, ','), '') from shardctl.route_floors")
    fi
    [ "$offline" = 0 ] || fail "an offline write guard range is left on $name"
    # No table holds the light trigger beside the others: one state or the other.
    [ "$(psql_shard "$i" -XAtc "select count(*) from pg_trigger l join pg_trigger h on h.tgrelid = l.tgrelid
                                where l.tgname = 'shardctl_guard_route' and h.tgname like 'shardctl_guard%'
                                and h.tgname <> 'shardctl_guard_route' and l.tgparentid = 0 and h.tgparentid = 0")" = 0 ] ||
      fail "a table on $name has the light route trigger and the guard's triggers together"
    if [ "$ranges" = 0 ]; then
      [ "$floors" != 0 ] ||
        [ "$(psql_shard "$i" -XAtc "select count(*) from pg_trigger where tgname like 'shardctl_guard%'")" = 0 ] ||
        fail "a write guard trigger without ranges or a route floor is left on $name"
      [ "$(psql_shard "$i" -XAtc "select count(*) from pg_trigger where tgname like 'shardctl_guard%'
                                  and tgname <> 'shardctl_guard_route'")" = 0 ] ||
        fail "the guard's triggers are left on $name without any range (the light route trigger belongs there)"
      # Every sharded table of a map with a floor here has it (the fleet has them all).
      if [ "$floors" != 0 ]; then
        local want got
        want=$(psql_catalog -XAtc "select count(*) from shardctl.tables where kind = 'sharded' and map_id in ($floor_maps)")
        got=$(psql_shard "$i" -XAtc "select count(*) from pg_trigger where tgname = 'shardctl_guard_route' and tgparentid = 0
                                     and tgenabled = 'A'")
        [ "$got" = "$want" ] ||
          fail "$got light route trigger(s) on $name, for $want sharded table(s) of the maps with a route floor there"
      fi
    fi
  done
  [ "$(psql_catalog -XAtc "select (select count(*) from shardctl.mappings where status <> 'online')
                                + (select count(*) from shardctl.guards)")" = 0 ] ||
    fail "offline mappings or recorded guards left: $(psql_catalog -XAtc "select * from shardctl.mappings where status <> 'online'")"
}

# wait_stopped PID WHAT OUTFILE: waits until the process stopped itself at its
# SHARDCTL_FAULT_PAUSE point; fails (showing OUTFILE) if it never does.
wait_stopped() {
  for _ in $(seq 1 400); do
    [ "$(ps -o stat= -p "$1" | cut -c1)" = T ] && return 0
    kill -0 "$1" 2>/dev/null || break
    sleep 0.05
  done
  fail "$2 never reached its pause point: $(cat "$3")"
}

last_op() { "$SHARDCTL_BIN/shardctl" op list --format json | jq -r '.operations[0].id'; }

# expect_sizes_as_planned PLAN SHARD...: each SHARD's live bytes, measured now (`stats
# collect`), within 10% of the bytes_after the rebalance plan file PLAN predicted for it.
expect_sizes_as_planned() {
  local plan=$1 s predicted measured
  shift
  expect_exit 0 shardctl stats collect --format json
  for s in "$@"; do
    predicted=$(jq ".plan.shards[] | select(.shard == \"$s\") | .bytes_after" "$plan")
    measured=$(jq ".shards[] | select(.shard == \"$s\") | .live_bytes" "$STDOUT")
    awk -v p="$predicted" -v m="$measured" 'BEGIN { d = (p - m) / m; exit !(d < 0.1 && d > -0.1) }' ||
      fail "$s: predicted $predicted live bytes, measured $measured"
  done
}

# --- waiting on the state itself, never on the clock ---------------------------------------
# The bounds below are hang guards, far above what the state needs even on a loaded machine
# under the sanitizer build: a test asserts that something happened (or did not wait for
# something), never that it was fast, so a slow CI machine cannot fail it nor a fast one pass
# it by luck.

# wait_until WHAT CMD...: runs CMD every 0.05 s until it succeeds; fails naming WHAT (and the
# case) if it has not after WAIT_TRIES tries (default 2400: two minutes and more).
wait_until() {
  local what=$1 i
  shift
  for ((i = 0; i < ${WAIT_TRIES:-2400}; i++)); do
    "$@" && return 0
    sleep 0.05
  done
  fail "gave up waiting (hang guard, $i tries) for: $what"
}

# sql_true DSN SQL: succeeds when SQL, run on DSN, returns t.
sql_true() { [ "$(psql -X -At "$1" -c "$2" 2>/dev/null)" = t ]; }

# expect_exit_guarded CODE CMD...: expect_exit, with CMD killed should it still run after
# HANG_GUARD seconds (default 180). The claim such a test makes is "it returns by itself" (does
# not hang, does not wait for X); the guard only turns a hang into a failure that says so.
# CMD must be an executable or `shardctl` (run as $SHARDCTL_BIN/shardctl), not a function.
expect_exit_guarded() {
  local want=$1 got=0 guard=${HANG_GUARD:-180}
  shift
  local cmd=("$@")
  [ "${cmd[0]}" != shardctl ] || cmd[0]=$SHARDCTL_BIN/shardctl
  timeout -k 10 "$guard" "${cmd[@]}" >"$STDOUT" 2>"$STDERR" || got=$?
  if [ "$got" = 124 ] || [ "$got" = 137 ]; then
    echo "--- stderr:" >&2; head -c 4000 "$STDERR" >&2
    fail "still running after $guard s, killed (a hang): $*"
  fi
  if [ "$got" != "$want" ]; then
    echo "--- stdout:" >&2; head -c 4000 "$STDOUT" >&2
    echo "--- stderr:" >&2; head -c 4000 "$STDERR" >&2
    fail "expected exit $want, got $got: $*"
  fi
}

# A psql session kept open, as an application's connection: it holds locks, transactions and
# snapshots for exactly as long as the test says, not for a pg_sleep hoped to be long enough.
#   session_open NAME DSN   starts it, with application_name NAME (pg_stat_activity, pg_locks
#                           show it by that name); its output goes to $TEST_TMP/session.NAME.out
#   session_send NAME SQL   sends SQL without waiting for it: wait on its effect (wait_until)
#   session_pid NAME        its backend's pid (empty until it has connected)
#   session_close NAME      ends it (psql quits, an open transaction rolls back) and waits for
#                           psql to exit
# psql reads a FIFO it opened for reading and writing itself, so it never sees the input end;
# writes open it the same way, so none blocks when psql is gone. The test keeps no descriptor of
# it open that the processes it starts could inherit (and keep a session alive with), and a
# watcher ends the session when the test's shell exits, however it exits.
declare -A _session_psql=() _session_dsn=() _session_watch=()
session_open() {
  local name=$1 dsn=$2 fifo="$TEST_TMP/session.$1.in" shell=$$
  _session_dsn[$name]=$dsn
  rm -f "$fifo"
  mkfifo "$fifo"
  PGAPPNAME=$name psql -X -q -v ON_ERROR_STOP=0 "$dsn" 0<>"$fifo" >"$TEST_TMP/session.$name.out" 2>&1 &
  _session_psql[$name]=$!
  # Data written to a FIFO nobody else holds open is lost: psql must hold it before the first
  # session_send.
  wait_until "session $name to open its input" _session_reading "$name"
  (while kill -0 "$shell" 2>/dev/null; do sleep 0.5; done; printf '\\q\n' 1<>"$fifo") </dev/null >/dev/null 2>&1 &
  _session_watch[$name]=$!
}
_session_reading() {
  [ "$(readlink "/proc/${_session_psql[$1]}/fd/0" 2>/dev/null)" = "$TEST_TMP/session.$1.in" ] && return 0
  kill -0 "${_session_psql[$1]}" 2>/dev/null || fail "session $1 ended: $(cat "$TEST_TMP/session.$1.out")"
  return 1
}
session_send() {
  kill -0 "${_session_psql[$1]}" 2>/dev/null || fail "session $1 is gone: $(cat "$TEST_TMP/session.$1.out")"
  printf '%s\n' "$2" 1<>"$TEST_TMP/session.$1.in"
}
session_pid() {
  psql -X -At "${_session_dsn[$1]}" -c "select pid from pg_stat_activity where application_name = '$1'" | head -1
}
session_close() {
  kill "${_session_watch[$1]}" 2>/dev/null || true  # it ends with its current 0.5 s nap
  printf '\\q\n' 1<>"$TEST_TMP/session.$1.in"
  wait "${_session_psql[$1]}" || true
  unset "_session_psql[$1]" "_session_dsn[$1]" "_session_watch[$1]"
}
