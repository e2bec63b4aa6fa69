# The write guard and the fence, as applications see them: writes to a moving key are refused
# (also under session_replication_role = replica, and TRUNCATE), operations on different maps
# of one shard do not see each other's ranges, moved keys stay fenced on the source (naming the
# new shard) until `op unfence`, a transaction older than the guard is waited for, `op cancel`
# rolls back a batch in flight, a purge that would delete something else than what was
# verified rolls back, and guard DDL behind a lock gives up with 75 naming the session.
source "$(dirname "$0")/lib.sh"

fresh_fleet guard --shards 3 --scale 1
before=$(fleet_fingerprint)

# refused SHARD SQL: the statement must fail with SQLSTATE 55000; prints the error.
refused() {
  local out
  out=$(psql_shard "$1" -v VERBOSITY=verbose -qc "$2" 2>&1) && fail "not refused on shard $1: $2"
  [[ "$out" == *55000* ]] || fail "refused with another error on shard $1: $2: $out"
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
wait_stopped "$move_pid" "the move" "$TEST_TMP/move.out"
move_op=$(last_op)

err=$(refused 1 "insert into orders values (205, 999001, now(), 'new')")
assert_contains "$err" "is being moved by shardctl operation $split_op to shard shard_3"
refused 1 "set session_replication_role = replica; update customers set name = 'x' where customer_id = 210" >/dev/null
refused 1 "truncate order_lines" >/dev/null
refused 1 "update tenant_notes set note = 'x' where tenant = 'acme'" >/dev/null
# Other keys, and the other map's keys that look like the first map's, stay writable.
psql_shard 1 -qc "update customers set name = name where customer_id in (100, 250)"
psql_shard 1 -qc "update tenant_notes set note = note where tenant = '205'"
# No application role can bypass the guard: the range table is not theirs to write.
psql_shard 1 -qc "create role app_writer_$$ login; grant usage on schema public to app_writer_$$;
                  grant select, insert, update, delete on all tables in schema public to app_writer_$$"
err=$(psql -X "$(shard_dsn 1) user=app_writer_$$" -qc "update shardctl.guard_ranges set purge_xid = pg_current_xact_id()" 2>&1) &&
  fail "an application role could write shardctl.guard_ranges"
err=$(psql -X "$(shard_dsn 1) user=app_writer_$$" -v VERBOSITY=verbose -qc \
  "update customers set name = 'x' where customer_id = 205" 2>&1) && fail "app role wrote a moving key"
assert_contains "$err" "55000"

# Fences of an unfinished operation are not lifted: 75, nothing changed.
expect_exit 75 shardctl op unfence "$split_op"
expect_stderr_contains "is running"
refused 1 "update customers set name = 'x' where customer_id = 205" >/dev/null

kill -CONT "$split_pid" "$move_pid"
wait "$split_pid" || fail "split failed: $(cat "$TEST_TMP/split.out")"
wait "$move_pid" || fail "move failed: $(cat "$TEST_TMP/move.out")"

# Fences: the source refuses writes to what it gave away, naming the new shard.
err=$(refused 1 "insert into orders values (205, 999002, now(), 'new')")
assert_contains "$err" "has moved to shard shard_3"
assert_contains "$err" "reload the shard map and write to shard shard_3"
err=$(refused 1 "insert into tenant_notes values ('acme', 'stale')")
assert_contains "$err" "has moved to shard shard_2"
psql_shard 1 -qc "update tenant_notes set note = note where tenant = '205'"  # the other point stays
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# unfence: dry run counts, the real one lifts; then no guard range is left on shard_1, and the
# maps' route floors keep the light trigger alone on each of their tables, which checks them
# (lib/migrate/guard.hpp).
expect_exit 0 shardctl op unfence "$split_op" --dry-run
expect_stdout_contains "would lift"
refused 1 "insert into customers values (205, 'stale', 1, now())" >/dev/null
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
refused 3 "insert into customers values (310, 'stale', 1, now())" >/dev/null
expect_exit 0 shardctl move --map customers --key 310 --to shard_3 --batch-size 50
psql_shard 3 -qc "update customers set name = name where customer_id = 310"
refused 2 "insert into customers values (310, 'stale', 1, now())" >/dev/null
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
expect_exit 0 shardctl op show "$op300"
# Loaded back but not flipped yet, the keys are still the source's: the fence on the target
# keeps refusing an application with a stale map, which would otherwise write rows the verify
# then finds changed. A cancel leaves that fence standing; a resume lifts it after the flip.
SHARDCTL_FAULT=journal.copied:1 expect_exit 99 shardctl move --map customers --key 310 --to shard_2 --batch-size 50
assert_eq "$(psql_shard 2 -XAtc "select count(*) from customers where customer_id = 310")" "1"
refused 2 "update customers set name = 'stale' where customer_id = 310" >/dev/null
expect_exit 0 shardctl op cancel "$(last_op)"
expect_exit 0 shardctl op resume "$(last_op)"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from customers where customer_id = 310")" "0"
refused 2 "insert into customers values (310, 'stale', 1, now())" >/dev/null
psql_shard 3 -qc "update customers set name = name where customer_id = 310"
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 310 --to shard_2 --batch-size 50 \
  >"$TEST_TMP/move_back.out" 2>&1 &
move_pid=$!
wait_stopped "$move_pid" "the move back" "$TEST_TMP/move_back.out"
refused 2 "update customers set name = 'stale' where customer_id = 310" >/dev/null
kill -CONT "$move_pid"
wait "$move_pid" || fail "the move back failed: $(cat "$TEST_TMP/move_back.out")"
psql_shard 2 -qc "update customers set name = name where customer_id = 310"
refused 3 "insert into customers values (310, 'stale', 1, now())" >/dev/null
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
