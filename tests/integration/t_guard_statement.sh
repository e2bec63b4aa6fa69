# The statement-level write guard of plain tables: with the per-row early refusal switched
# off (shardctl.row_guard = off, as shardctl's own sessions run, and as any session may), a
# multi-row INSERT, a COPY, an INSERT ... ON CONFLICT DO UPDATE and an UPDATE that moves a key
# into an offline range are still refused whole (55000, nothing written), also under
# session_replication_role = replica, and so is an application's DELETE (the row trigger is
# not on DELETE); a shard holding an earlier version's row trigger (on DELETE too) gets
# this version's triggers when a guard is next installed, and its fences still refuse writes.
source "$(dirname "$0")/lib.sh"

fresh_fleet gstmt --shards 3 --scale 1

# refused SHARD SQL: the statement must fail with SQLSTATE 55000; prints the error.
refused() {
  local out
  out=$(psql_shard "$1" -v VERBOSITY=verbose -qc "$2" 2>&1) && fail "not refused on shard $1: $2"
  [[ "$out" == *55000* ]] || fail "refused with another error on shard $1: $2: $out"
  echo "$out"
}
triggers() {
  psql_shard "$1" -XAtc "select string_agg(tgname || ':' || tgenabled::text || case when tgqual is null then '' else '?' end || '/' || tgtype, ',' order by tgname) from pg_trigger
                         where tgrelid = '$2'::regclass and tgname like 'shardctl_guard%'"
}

# An earlier version's guard on shard_1: a move leaves fences (and this version's triggers),
# then orders gets the old row trigger in their place.
expect_exit 0 shardctl split --map customers --at 150 --to shard_3 --batch-size 1000
old_op=$(last_op)
assert_eq "$(triggers 1 orders)" \
  "shardctl_guard:A?/23,shardctl_guard_delete:A/8,shardctl_guard_insert:A/4,shardctl_guard_truncate:A/34,shardctl_guard_update:A/16"
map_id=$(psql_shard 1 -XAtc "select distinct map_id from shardctl.guard_ranges")
psql_shard 1 -qc "drop trigger shardctl_guard on orders; drop trigger shardctl_guard_insert on orders; drop trigger shardctl_guard_update on orders;
                  drop trigger shardctl_guard_delete on orders;
                  create trigger shardctl_guard before insert or update or delete on orders for each row
                    execute function shardctl.guard('$map_id', 'customer_id', 'int');
                  alter table orders enable always trigger shardctl_guard"
err=$(refused 1 "insert into orders values (160, 999001, now(), 'new')")
assert_contains "$err" "has moved to shard shard_3"

# A split paused with a batch copied: keys 100..119 of shard_1 offline.
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 100 --to shard_2 \
  --batch-size 20 >"$TEST_TMP/split.out" 2>&1 &
split_pid=$!
trap 'kill -CONT $split_pid 2>/dev/null || true' EXIT
wait_stopped "$split_pid" "the split" "$TEST_TMP/split.out"
split_op=$(last_op)
# The guard's installation replaced the row trigger.
assert_eq "$(triggers 1 orders)" \
  "shardctl_guard:A?/23,shardctl_guard_delete:A/8,shardctl_guard_insert:A/4,shardctl_guard_truncate:A/34,shardctl_guard_update:A/16"

orders=$(psql_shard 1 -XAtc "select count(*) || ':' || sum(hashtext(o::text)) from orders o")
customers=$(psql_shard 1 -XAtc "select count(*) || ':' || sum(hashtext(c::text)) from customers c")
# Many rows, one of them offline: the statement is refused and writes nothing.
err=$(refused 1 "set shardctl.row_guard = off; insert into orders select c, 999100 + c, now(), 'new' from generate_series(50, 105) c")
assert_contains "$err" "is being moved by shardctl operation $split_op to shard shard_2"
assert_contains "$err" "of public.orders"
err=$(refused 1 "set shardctl.row_guard = off; set session_replication_role = replica; delete from orders where customer_id between 90 and 110")
assert_contains "$err" "is being moved by shardctl operation $split_op"
# An application's DELETE (no row trigger on DELETE: lib/migrate/guard.hpp) meets the statement guard.
err=$(refused 1 "delete from order_lines where customer_id between 100 and 105")
assert_contains "$err" "is being moved by shardctl operation $split_op"
# (Replica role from here on where FK checks would fail first: the guard fires after them.)
err=$(refused 1 "set shardctl.row_guard = off; set session_replication_role = replica;
                 update customers set customer_id = 200 where customer_id = 60")
assert_contains "$err" "key 200 of public.customers has moved to shard shard_3"
refused 1 "set shardctl.row_guard = off; insert into customers select customer_id, 'x', 1, now() from customers where customer_id = 110
           on conflict (customer_id) do update set name = 'x'" >/dev/null
out=$(printf '%s\n' "70	999200	2026-01-01	new" "112	999201	2026-01-01	new" |
  PGOPTIONS="-c shardctl.row_guard=off" psql_shard 1 -v VERBOSITY=verbose -qc "copy orders from stdin" 2>&1) && fail "a COPY wrote an offline key"
assert_contains "$out" "55000"
# The fence of the earlier move, under the statement triggers now.
err=$(refused 1 "set shardctl.row_guard = off; set session_replication_role = replica;
                 insert into orders values (170, 999300, now(), 'new'), (60, 999301, now(), 'new')")
assert_contains "$err" "has moved to shard shard_3 (shardctl operation $old_op)"
assert_eq "$(psql_shard 1 -XAtc "select count(*) || ':' || sum(hashtext(o::text)) from orders o")" "$orders"
assert_eq "$(psql_shard 1 -XAtc "select count(*) || ':' || sum(hashtext(c::text)) from customers c")" "$customers"
# Keys outside every range stay writable, in bulk too.
psql_shard 1 -qc "update orders set status = status where customer_id between 1 and 99"
psql_shard 1 -qc "insert into orders select c, 999400 + c, now(), 'new' from generate_series(80, 90) c;
                  delete from orders where order_id between 999480 and 999490"

kill -CONT "$split_pid"
wait "$split_pid" || fail "split failed: $(cat "$TEST_TMP/split.out")"
trap - EXIT
err=$(refused 1 "set session_replication_role = replica; insert into orders values (105, 999500, now(), 'new')")
assert_contains "$err" "has moved to shard shard_2"
assert_fleet_consistent
pass
