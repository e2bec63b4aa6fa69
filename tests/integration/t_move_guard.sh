# The write guard and the fence, as applications see them: writes to a moving key are refused
# (also under session_replication_role = replica, and TRUNCATE), operations on different maps
# of one shard do not see each other's ranges, moved keys stay fenced on the source (naming the
# new shard) until `op unfence`, a transaction older than the guard is waited for, `op cancel`
# rolls back a batch in flight, a purge that would delete something else than what was
# verified rolls back, and guard DDL behind a lock gives up with 75 naming the session.
source "$(dirname "$0")/lib.sh"

fresh_fleet guard --shards 3 --scale 1
before=$(fleet_fingerprint)

# refused SHARD SQL MESSAGE: the statement must fail with SQLSTATE 55000 and the guard's
# MESSAGE (or its beginning); prints the error.
refused() {
  local out
  out=$(psql_shard "$1" -v VERBOSITY=verbose -qc "$2" 2>&1) && fail "not refused on shard $1: $2"
  [[ "$out" == *"ERROR:  55000: $3"* ]] || fail "refused otherwise than [55000: $3] on shard $1: $2: $out"
  echo "$out"
}

# A second map on the same shards: a text list map with one table.
for i in 1 2 3; do psql_shard "$i" -qc "create table public.tenant_notes (tenant text primary key, note text)"; done
shardctl map create tenants --kind list --key-type text >/dev/null
shardctl mapping add --map tenants --point acme --shard shard_1 >/dev/null
shardctl mapping add --map tenants --point 205 --shard shard_1 >/dev/null
shardctl table add-sharded tenant_notes --map tenants --key tenant >/dev/null
psql_shard 1 -qc "insert into tenant_notes values ('acme', 'a'), ('205', 'b')"

# Both paused on shard_1 with a batch copied: a split of the bigint map (keys 200..220) and a
# move of the text point 'acme'.
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 200 --to shard_3 \
  --batch-size 20 >"$TEST_TMP/split.out" 2>&1 &
split_pid=$!
wait_stopped "$split_pid" "the split" "$TEST_TMP/split.out"
split_op=$(last_op)
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" move --map tenants --key acme --to shard_2 \
  >"$TEST_TMP/move.out" 2>&1 &
move_pid=$!
# A failure while they are paused must not leave them stopped (a failed test keeps its databases).
trap 'kill -CONT $split_pid $move_pid 2>/dev/null || true' EXIT
wait_stopped "$move_pid" "the move" "$TEST_TMP/move.out"
move_op=$(last_op)

err=$(refused 1 "insert into orders values (205, 999001, now(), 'new')" "key 205 of public.orders is being moved by shardctl operation $split_op to shard shard_3")
assert_contains "$err" "is being moved by shardctl operation $split_op to shard shard_3"
refused 1 "set session_replication_role = replica; update customers set name = 'x' where customer_id = 210" \
  "key 210 of public.customers is being moved by shardctl operation $split_op to shard shard_3" >/dev/null
refused 1 "truncate order_lines" \
  "TRUNCATE of public.order_lines is refused: shardctl operation $split_op is moving rows of it to shard shard_3" >/dev/null
refused 1 "update tenant_notes set note = 'x' where tenant = 'acme'" "key acme of public.tenant_notes is being moved by shardctl operation $move_op to shard shard_2" >/dev/null
# Other keys, and the other map's keys that look like the first map's, stay writable.
psql_shard 1 -qc "update customers set name = name where customer_id in (100, 250)"
psql_shard 1 -qc "update tenant_notes set note = note where tenant = '205'"
# No application role can bypass the guard: a login with what an application has (its tables'
# rows, schema shardctl usable for assert_route) tries every way to write an offline key or to
# lift or change the guard (lib/shardside/sql/guard.sql), and each fails with PostgreSQL's or the
# guard's own error; the offline rows and the guard's state are as they were.
app=app_writer_$$
psql_shard 1 -qc "create role $app login; grant usage on schema public to $app;
                  grant select, insert, update, delete on all tables in schema public to $app"
# app_refused SQLSTATE MESSAGE SQL: the application role's SQL fails with SQLSTATE and MESSAGE.
app_refused() {
  local out
  out=$(psql -X -v ON_ERROR_STOP=1 -v VERBOSITY=verbose "$(shard_dsn 1) user=$app" -qc "$3" 2>&1) &&
    fail "the application role was let through: $3"
  [[ "$out" == *"ERROR:  $1: $2"* ]] || fail "the application role's [$3] failed otherwise than $1 [$2]: $out"
}
offline_rows() {  # the offline keys' rows on shard_1, the guard's rows, bypasses, floors and triggers
  psql_shard 1 -XAt <<'SQL'
select md5(string_agg(r, ',' order by r)) from (
  select c::text r from customers c where customer_id between 200 and 219 union all
  select o::text from orders o where customer_id between 200 and 219 union all
  select l::text from order_lines l where customer_id between 200 and 219 union all
  select n::text from tenant_notes n where tenant = 'acme') a;
select count(*) from customers where customer_id between 200 and 219;
select op_id, map_id, batch_no, lo, hi, state, new_shard, purge_xid, expires_at from shardctl.guard_ranges order by range_id;
select count(*) from shardctl.guard_bypass;
select * from shardctl.route_floors order by map_id;
select tgrelid::regclass, tgname, tgenabled from pg_trigger where tgname like 'shardctl%' order by 1, 2;
SQL
}
guard_before=$(offline_rows)
[ "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id between 200 and 219")" -gt 0 ] ||
  fail "no offline customer rows to guard"
# Each write below comes after the bypass it tries, in the same transaction.
write205="update customers set name = 'x' where customer_id = 205"
app_refused 42501 "permission denied for table guard_ranges" \
  "update shardctl.guard_ranges set purge_xid = pg_current_xact_id(); $write205"
app_refused 42501 "permission denied for table guard_ranges" "delete from shardctl.guard_ranges; $write205"
app_refused 42501 "permission denied for table guard_ranges" \
  "insert into shardctl.guard_ranges (op_id, map_id, batch_no, state, new_shard) values (gen_random_uuid(), 1, 1, 'fenced', 'x')"
app_refused 42501 "permission denied for table guard_bypass" \
  "insert into shardctl.guard_bypass values (1, pg_current_xact_id()); $write205"
app_refused 42501 "permission denied for table route_floors" "delete from shardctl.route_floors"
app_refused 42501 "permission denied for table route_floors" \
  "insert into shardctl.route_floors (map_id, map_name, min_version) values (99, 'x', 1)"
app_refused 42501 "permission denied for schema shardctl" \
  "create function shardctl.bypasses(range bigint) returns boolean language sql as 'select true'"
# The triggers are the table owner's: an application cannot disable, re-enable for replica
# sessions only, or drop them.
app_refused 42501 "must be owner of table customers" "alter table customers disable trigger shardctl_guard_update; $write205"
app_refused 42501 "must be owner of table customers" "alter table customers enable replica trigger shardctl_guard_update"
app_refused 42501 "must be owner of relation customers" "drop trigger shardctl_guard_update on customers"
# session_replication_role is a superuser's (the triggers are ENABLE ALWAYS for a superuser's).
app_refused 42501 'permission denied to set parameter "session_replication_role"' \
  "set session_replication_role = replica; $write205"
app_refused 42501 'permission denied to set parameter "session_replication_role"' \
  "select set_config('session_replication_role', 'replica', true); $write205"
# Every function of schema shardctl but assert_route, the SECURITY DEFINER ones first among
# them, is refused before it runs.
mapfile -t functions < <(psql_shard 1 -XAtc "select p.oid::regprocedure from pg_proc p
  where p.pronamespace = 'shardctl'::regnamespace and p.proname <> 'assert_route' order by p.prosecdef desc, 1")
definers=$(psql_shard 1 -XAtc "select string_agg(proname, ',' order by proname) from pg_proc
  where pronamespace = 'shardctl'::regnamespace and prosecdef")
assert_eq "$definers" "applying_stream,assert_route,await_cutover,guard,guard_hit,guard_route,guard_rows,guard_truncate"
for f in "${functions[@]}"; do
  name=${f%%(*}
  args=${f#*(}
  args=${args%)}
  call="select ${name}("
  if [ -n "$args" ]; then
    IFS=, read -ra types <<<"$args"
    for t in "${types[@]}"; do call+="null::$t,"; done
    call=${call%,}
  fi
  app_refused 42501 "permission denied for function ${name#shardctl.}" "$call); $write205"
done
[ "${#functions[@]}" -ge 15 ] || fail "only ${#functions[@]} guard functions found: ${functions[*]}"
# What an application may do does not lift the guard: the early row check off, a route stated
# (in the setting, and through assert_route, the one function it may call), the refusal is the
# guard's own, for the moving key.
moving205="55000: key 205 of public.customers is being moved by shardctl operation $split_op to shard shard_3"
app_refused "${moving205%%: *}" "${moving205#*: }" "set shardctl.row_guard = off; $write205"
app_refused "${moving205%%: *}" "${moving205#*: }" "set shardctl.route = 'customers:9223372036854775807'; $write205"
app_refused "${moving205%%: *}" "${moving205#*: }" \
  "select shardctl.assert_route('customers', 9223372036854775807); set shardctl.row_guard = off; $write205"
app_refused 55000 "key acme of public.tenant_notes is being moved by shardctl operation $move_op to shard shard_2" \
  "set shardctl.row_guard = off; delete from tenant_notes where tenant = 'acme'"
# TRUNCATE: refused by PostgreSQL without the privilege, by the guard with it.
app_refused 42501 "permission denied for table order_lines" "truncate order_lines"
psql_shard 1 -qc "grant truncate on order_lines to $app"
app_refused 55000 "TRUNCATE of public.order_lines is refused: shardctl operation $split_op is moving rows of it to shard shard_3" \
  "truncate order_lines"
err=$(psql -X "$(shard_dsn 1) user=$app" -v VERBOSITY=verbose -qc "$write205" 2>&1) && fail "app role wrote a moving key"
assert_contains "$err" "ERROR:  $moving205"
assert_contains "$err" "CONSTRAINT NAME:  shardctl_moving"
assert_eq "$(offline_rows)" "$guard_before"
psql_shard 1 -qc "drop owned by $app; drop role $app"

# Fences of an unfinished operation are not lifted: 75, nothing changed.
expect_exit 75 shardctl op unfence "$split_op"
expect_stderr_contains "is running"
refused 1 "update customers set name = 'x' where customer_id = 205" "key 205 of public.customers is being moved by shardctl operation $split_op to shard shard_3" >/dev/null

kill -CONT "$split_pid" "$move_pid"
wait "$split_pid" || fail "split failed: $(cat "$TEST_TMP/split.out")"
wait "$move_pid" || fail "move failed: $(cat "$TEST_TMP/move.out")"
trap _drop_made_databases EXIT

# Fences: the source refuses writes to what it gave away, naming the new shard.
err=$(refused 1 "insert into orders values (205, 999002, now(), 'new')" "key 205 of public.orders has moved to shard shard_3")
assert_contains "$err" "has moved to shard shard_3"
assert_contains "$err" "reload the shard map and write to shard shard_3"
err=$(refused 1 "insert into tenant_notes values ('acme', 'stale')" "key acme of public.tenant_notes has moved to shard shard_2")
assert_contains "$err" "has moved to shard shard_2"
psql_shard 1 -qc "update tenant_notes set note = note where tenant = '205'"  # the other point stays
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# unfence: dry run counts, the real one lifts; then no guard range is left on shard_1, and the
# maps' route floors keep the light trigger alone on each of their tables, which checks them
# (lib/migrate/guard.hpp).
expect_exit 0 shardctl op unfence "$split_op" --dry-run
expect_stdout_contains "would lift"
refused 1 "insert into customers values (205, 'stale', 1, now())" "key 205 of public.customers has moved to shard shard_3" >/dev/null
batches=$(shardctl op show "$split_op" --format json | jq -r .batches)
expect_exit 0 shardctl op unfence "$split_op"
expect_stdout_contains "lifted $batches fence(s) of operation $split_op on shard_1"
expect_exit 0 shardctl op unfence "$move_op" --format json
assert_eq "$(jq -r '.shards[0].fences' "$STDOUT")" "1"
assert_eq "$(psql_shard 1 -XAtc "select distinct tgname from pg_trigger where tgname like 'shardctl_guard%'")" "shardctl_guard_route"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from pg_trigger where tgname = 'shardctl_guard_route'")" "4"
assert_eq "$(psql_shard 1 -XAtc "select string_agg(map_name, ',' order by map_name) from shardctl.route_floors")" "customers,tenants"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from shardctl.guard_ranges")" "0"
expect_exit 64 shardctl op unfence not-an-id

# Guard DDL behind a lock: an open transaction holding a row lock on orders blocks the
# trigger's creation; the split gives up with 75 naming the session, and resumes later. The
# holder is a session that keeps its transaction open until the test ends it (lib.sh).
session_open guard_holder "$(shard_dsn 2)"
session_send guard_holder "begin; update orders set status = status where customer_id = 350;"
wait_until "guard DDL behind a lock: the holder's lock on orders" sql_true "$(shard_dsn 2)" \
  "select exists (select from pg_locks l join pg_stat_activity a using (pid) where a.application_name = 'guard_holder'
                  and l.relation = 'orders'::regclass and l.mode = 'RowExclusiveLock' and l.granted)"
expect_exit 75 shardctl split --map customers --at 640 --to shard_1 --batch-size 1000
expect_stderr_contains "held by pid $(session_pid guard_holder) "
op=$(last_op)
session_close guard_holder
expect_exit 0 shardctl op resume "$op"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# Keys moving back to a shard that fenced them: the fence on them goes after the flip.
expect_exit 0 shardctl split --map customers --at 300 --to shard_2 --batch-size 50
op300=$(last_op)
refused 3 "insert into customers values (310, 'stale', 1, now())" "key 310 of public.customers has moved to shard shard_2" >/dev/null
expect_exit 0 shardctl move --map customers --key 310 --to shard_3 --batch-size 50
psql_shard 3 -qc "update customers set name = name where customer_id = 310"
refused 2 "insert into customers values (310, 'stale', 1, now())" "key 310 of public.customers has moved to shard shard_3" >/dev/null
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
expect_exit 0 shardctl op show "$op300"
# Loaded back but not flipped yet, the keys are still the source's: the fence on the target
# keeps refusing an application with a stale map, which would otherwise write rows the verify
# then finds changed. A cancel leaves that fence standing; a resume lifts it after the flip.
SHARDCTL_FAULT=journal.copied:1 expect_exit 99 shardctl move --map customers --key 310 --to shard_2 --batch-size 50
assert_eq "$(psql_shard 2 -XAtc "select count(*) from customers where customer_id = 310")" "1"
refused 2 "update customers set name = 'stale' where customer_id = 310" "key 310 of public.customers has moved to shard shard_3" >/dev/null
expect_exit 0 shardctl op cancel "$(last_op)"
expect_exit 0 shardctl op resume "$(last_op)"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from customers where customer_id = 310")" "0"
refused 2 "insert into customers values (310, 'stale', 1, now())" "key 310 of public.customers has moved to shard shard_3" >/dev/null
psql_shard 3 -qc "update customers set name = name where customer_id = 310"
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 310 --to shard_2 --batch-size 50 \
  >"$TEST_TMP/move_back.out" 2>&1 &
move_pid=$!
wait_stopped "$move_pid" "the move back" "$TEST_TMP/move_back.out"
refused 2 "update customers set name = 'stale' where customer_id = 310" "key 310 of public.customers has moved to shard shard_3" >/dev/null
kill -CONT "$move_pid"
wait "$move_pid" || fail "the move back failed: $(cat "$TEST_TMP/move_back.out")"
psql_shard 2 -qc "update customers set name = name where customer_id = 310"
refused 3 "insert into customers values (310, 'stale', 1, now())" "key 310 of public.customers has moved to shard shard_2" >/dev/null
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# A REPEATABLE READ writer whose snapshot predates the guard: the move waits for it, and its
# row moves with the batch instead of staying behind on the source. The writer takes its
# snapshot, the split installs its guard (the range offline on shard_2) and waits; only then
# does the writer insert (its snapshot does not see the guard) and commit.
session_open rr_writer "$(shard_dsn 2)"
session_send rr_writer "begin isolation level repeatable read; select 1;"
wait_until "repeatable-read writer: its snapshot" sql_true "$(shard_dsn 2)" \
  "select exists (select from pg_stat_activity where application_name = 'rr_writer' and state = 'idle in transaction'
                  and backend_xmin is not null)"
"$SHARDCTL_BIN/shardctl" split --map customers --at 400 --to shard_3 --batch-size 1000 >"$TEST_TMP/split.out" 2>&1 &
split_pid=$!
wait_until "repeatable-read writer: the split's guard on shard_2" sql_true "$(shard_dsn 2)" \
  "select exists (select from shardctl.guard_ranges where state = 'offline')"
kill -0 "$split_pid" 2>/dev/null || fail "repeatable-read writer: the split did not wait for it: $(cat "$TEST_TMP/split.out")"
session_send rr_writer "insert into orders values (420, 999003, now(), 'new'); commit;"
wait "$split_pid" || fail "repeatable-read writer: the split failed: $(cat "$TEST_TMP/split.out")"
session_close rr_writer
! grep -q ERROR "$TEST_TMP/session.rr_writer.out" || fail "repeatable-read writer: $(cat "$TEST_TMP/session.rr_writer.out")"
assert_eq "$(psql_shard 3 -XAtc "select count(*) from orders where order_id = 999003")" "1"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from orders where order_id = 999003")" "0"
psql_shard 3 -qc "delete from orders where order_id = 999003"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# op cancel of an interrupted operation rolls the batch in flight back.
SHARDCTL_FAULT=journal.copied:2 expect_exit 99 shardctl split --map customers --at 450 --to shard_1 --batch-size 20
op=$(last_op)
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id between 470 and 489")" "20"
expect_exit 0 shardctl op cancel "$op"
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r '.status + " " + (.batches_done | tostring)' "$STDOUT")" "cancelled 1"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id between 470 and 489")" "0"
psql_shard 3 -qc "update customers set name = name where customer_id = 470"  # writable again
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# A purge held to what was verified: a row slipped in past the guard (a superuser disabling
# it) after the verify makes the purge roll back, and nothing is deleted.
SHARDCTL_FAULT=journal.flipped:1 expect_exit 99 shardctl split --map customers --at 600 --to shard_1 --batch-size 100
op=$(last_op)
psql_shard 3 -qc "alter table orders disable trigger shardctl_guard, disable trigger shardctl_guard_insert;
                  insert into orders values (610, 999004, now(), 'new');
                  alter table orders enable always trigger shardctl_guard, enable always trigger shardctl_guard_insert"
expect_exit 70 shardctl op resume "$op"
expect_stderr_contains "rolled back"
assert_eq "$(psql_shard 3 -XAtc "select count(*) from customers where customer_id >= 600 and customer_id < 640")" "40"
psql_shard 3 -qc "alter table orders disable trigger shardctl_guard, disable trigger shardctl_guard_delete;
                  delete from orders where order_id = 999004;
                  alter table orders enable always trigger shardctl_guard, enable always trigger shardctl_guard_delete"
expect_exit 0 shardctl op resume "$op"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

pass
