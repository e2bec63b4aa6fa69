# Preconditions that see the whole schema and the operations in flight:
#  1. reference tables copied in foreign-key order (nation REFERENCES region);
#  2. an operation overlapping one in flight exits 75 naming it, even once the first has cut
#     the map into its batch mappings; so does an offline mapping;
#  3. refused up front (64), naming each table and constraint, nothing changed:
#     (d. below: a foreign key among the moving tables that does not carry the key column;)
#     a. a foreign key from a table that does not move into the moving tables (CASCADE, NO ACTION);
#     b. a moving table's parent that neither moves nor is a reference table, rows missing on
#        the target (and the parent table missing there);
#     c. NULL keys, with their count.
source "$(dirname "$0")/lib.sh"

# --- 1. reference tables in foreign-key order ------------------------------------------------
fresh_fleet refs --shards 3
for i in 1 2 3; do
  psql_shard "$i" -qc "create table tpch_region (r_regionkey int primary key, r_name text not null);
                       create table tpch_nation (n_nationkey int primary key, n_name text not null,
                                                 n_regionkey int not null references tpch_region)"
done
for i in 1 2; do
  psql_shard "$i" -qc "insert into tpch_region select g, 'r' || g from generate_series(0, 4) g;
                       insert into tpch_nation select g, 'n' || g, g % 5 from generate_series(0, 24) g"
done
# The child registered first: catalog order is the wrong copy order.
shardctl table add-reference public.tpch_nation >/dev/null
shardctl table add-reference public.tpch_region >/dev/null
before=$(fleet_fingerprint)
expect_exit 0 shardctl split --map customers --at 200 --to shard_3 --batch-size 50
assert_eq "$(psql_shard 3 -XAtc "select (select count(*) from tpch_region) || '/' || (select count(*) from tpch_nation)")" "5/25"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# --- 2. an operation in flight ----------------------------------------------------------------
fresh_fleet busy --shards 2
before=$(fleet_fingerprint)
# The first split pauses once its first batch is done: the map is cut into batch mappings.
SHARDCTL_FAULT_PAUSE=journal.done:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 100 --to shard_2 \
  --batch-size 20 >"$TEST_TMP/a.out" 2>&1 &
a=$!
wait_stopped "$a" "the first split" "$TEST_TMP/a.out"
op=$(last_op)
dump=$(catalog_dump)
# The same split again: mapping 100..120 now starts at 100, but the answer is "wait", not "nothing to split".
expect_exit 75 shardctl split --map customers --at 100 --to shard_2 --batch-size 20
expect_stderr_contains "operation $op (split, running) already works on an overlapping range of map customers: 100.."
expect_stderr_contains "(asked: --at 100)"
expect_stderr_contains "shardctl op wait $op"
expect_exit 75 shardctl split --map customers --at 300 --to shard_2
expect_stderr_contains "operation $op"
expect_exit 75 shardctl merge --map customers --range 50..150 --into shard_2
expect_stderr_contains "operation $op"
expect_exit 75 shardctl move --map customers --key 110 --to shard_1
expect_stderr_contains "operation $op"
assert_eq "$(catalog_dump)" "$dump"
# Keys the first split does not claim are free.
expect_exit 0 shardctl split --map customers --at 50 --to shard_2 --move lower --dry-run
kill -CONT "$a"
wait "$a" || fail "the first split failed: $(cat "$TEST_TMP/a.out")"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
# An offline mapping (a dead operation's) in the range: wait, not usage.
psql_catalog -qc "update shardctl.mappings set status = 'offline' where lower(int_range) = 100"
expect_exit 75 shardctl move --map customers --key 150 --to shard_1
expect_stderr_contains "is offline"
psql_catalog -qc "update shardctl.mappings set status = 'online'"

# --- 3. schema-wide refusals ------------------------------------------------------------------
fresh_fleet schema --shards 3
before=$(fleet_fingerprint)
dump=$(catalog_dump)
refused_unchanged() {
  assert_eq "$(catalog_dump)" "$dump"
  assert_eq "$(fleet_fingerprint)" "$before"
  assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.operations")" "0"
}

# a. An unregistered child of orders: the purge would cascade into rows never copied (CASCADE)
#    or fail after the flip (NO ACTION).
for action in "cascade" "no action"; do
  for i in 1 2 3; do
    psql_shard "$i" -qc "set client_min_messages = warning; drop table if exists audit_notes;
                         create table audit_notes (note_id int primary key, customer_id bigint, order_id int, body text,
                           constraint audit_notes_order_fk foreign key (customer_id, order_id)
                           references orders on delete $action)"
  done
  psql_shard 1 -qc "insert into audit_notes select row_number() over (), customer_id, order_id, 'n'
                    from orders where customer_id between 190 and 260"
  notes=$(psql_shard 1 -XAtc "select count(*) from audit_notes")
  expect_exit 64 shardctl split --map customers --at 200 --to shard_2 --batch-size 50
  expect_stderr_contains "table public.audit_notes references public.orders (constraint audit_notes_order_fk, ON DELETE ${action^^}) on shard_1 but is not moved with map customers"
  expect_stderr_contains "shardctl table add-sharded"
  refused_unchanged
  assert_eq "$(psql_shard 1 -XAtc "select count(*) from audit_notes")" "$notes"
done
# A table registered on another map is not moved with this one either; both reported together.
psql_shard 1 -qc "create table other_child (k bigint primary key, customer_id bigint references customers)"
psql_shard 2 -qc "create table other_child (k bigint primary key, customer_id bigint references customers)"
psql_shard 3 -qc "create table other_child (k bigint primary key, customer_id bigint references customers)"
shardctl map create others --kind range --key-type bigint >/dev/null
shardctl table add-sharded public.other_child --map others --key k >/dev/null
dump=$(catalog_dump)
expect_exit 64 shardctl split --map customers --at 200 --to shard_2
expect_stderr_contains "table public.audit_notes references public.orders"
expect_stderr_contains "table public.other_child references public.customers (constraint other_child_customer_id_fkey, ON DELETE NO ACTION)"
refused_unchanged
for i in 1 2 3; do psql_shard "$i" -qc "drop table audit_notes; drop table other_child"; done
shardctl table remove public.other_child >/dev/null
dump=$(catalog_dump)

# b. A moving table whose parent is neither moved nor a reference table.
for i in 1 2 3; do
  psql_shard "$i" -qc "create table warehouses (wh_id int primary key, name text);
                       create table shipments (customer_id bigint not null references customers, n int, wh_id int,
                         primary key (customer_id, n),
                         constraint shipments_wh_fk foreign key (wh_id) references warehouses)"
done
psql_shard 1 -qc "insert into warehouses select g, 'w' || g from generate_series(1, 6) g;
                  insert into shipments select c, 1, 1 + c % 5 from generate_series(200, 260) c;
                  insert into shipments select c, 2, null from generate_series(200, 210) c;
                  insert into shipments values (100, 1, 6)"
psql_shard 2 -qc "insert into warehouses select g, 'w' || g from generate_series(1, 2) g"
shardctl table add-sharded public.shipments --map customers --key customer_id >/dev/null
dump=$(catalog_dump)
# Warehouses 3, 4, 5 are needed (1 + c % 5 for c in 200..260); 6 belongs to a key that stays.
expect_exit 64 shardctl split --map customers --at 200 --to shard_2
expect_stderr_contains "table public.shipments references public.warehouses (constraint shipments_wh_fk): 3 parent row(s)"
expect_stderr_contains "missing on shard_2"
refused_unchanged
psql_shard 2 -qc "insert into warehouses select g, 'w' || g from generate_series(3, 5) g"
expect_exit 0 shardctl split --map customers --at 200 --to shard_2 --dry-run
# The parent table itself missing on the target.
psql_shard 3 -qc "set client_min_messages = warning; drop table warehouses cascade"
expect_exit 64 shardctl split --map customers --at 200 --to shard_3 --dry-run
expect_stderr_contains "table public.shipments references public.warehouses (constraint shipments_wh_fk) but public.warehouses is missing on target shard shard_3"
refused_unchanged
for i in 1 2 3; do psql_shard "$i" -qc "set client_min_messages = warning; drop table shipments; drop table if exists warehouses"; done
shardctl table remove public.shipments >/dev/null
dump=$(catalog_dump)

# d. Foreign keys among the moving tables without the key column: a task tree whose parent_id
#    references another customer's task (ON DELETE CASCADE: the purge would delete the task of
#    customer 150, which stays), and a moving table referencing another moving table by a column
#    that is not the key. Refused, naming both constraints; nothing changes.
for i in 1 2 3; do
  psql_shard "$i" -qc "create table tasks (customer_id bigint not null, task_id int primary key,
                         parent_id int constraint tasks_parent_fk references tasks on delete cascade,
                         owner_id bigint constraint tasks_owner_fk references customers (customer_id))"
done
psql_shard 1 -qc "insert into tasks values (250, 1, null, 250), (150, 2, 1, 250)"
shardctl table add-sharded public.tasks --map customers --key customer_id >/dev/null
dump=$(catalog_dump)
for verb in "split --map customers --at 200 --to shard_2" "move --map customers --key 250 --to shard_2 --dry-run"; do
  read -ra argv <<<"$verb"
  expect_exit 64 shardctl "${argv[@]}"
  expect_stderr_contains "constraint tasks_parent_fk of public.tasks references public.tasks without the key column customer_id on shard_1"
  expect_stderr_contains "constraint tasks_owner_fk of public.tasks references public.customers without the key column customer_id"
  expect_stderr_contains "shardctl xref add"
  refused_unchanged
done
assert_eq "$(psql_shard 1 -XAtc "select string_agg(task_id::text, ',' order by task_id) from tasks")" "1,2"
for i in 1 2 3; do psql_shard "$i" -qc "drop table tasks"; done
shardctl table remove public.tasks >/dev/null
dump=$(catalog_dump)

# c. NULL keys: no shard owns them; refused with their count, whatever the batch size.
for i in 1 2 3; do
  psql_shard "$i" -qc "create table visits (customer_id bigint, v int, unique (customer_id, v))"
done
psql_shard 1 -qc "insert into visits select c, v from generate_series(1, 300) c, generate_series(1, 2) v;
                  insert into visits select null, v from generate_series(1, 3) v"
shardctl table add-sharded public.visits --map customers --key customer_id >/dev/null
dump=$(catalog_dump)
for bs in 1000 7 1; do
  expect_exit 64 shardctl move --map customers --key 5 --to shard_2 --batch-size "$bs"
  expect_stderr_contains "table public.visits has 3 row(s) with a NULL customer_id on shard_1; a NULL key belongs to no shard"
done
expect_exit 64 shardctl split --map customers --at 200 --to shard_2
expect_stderr_contains "NULL customer_id"
refused_unchanged
psql_shard 1 -qc "delete from visits where customer_id is null"
expect_exit 0 shardctl move --map customers --key 5 --to shard_2 --batch-size 7
assert_eq "$(psql_shard 2 -XAtc "select count(*) from visits")" "600"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
