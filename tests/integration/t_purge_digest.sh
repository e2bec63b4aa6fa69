# The purge held to what was verified (lib/migrate/purge.cpp): the flip journals, beside each
# table's stream digest, the value digest the source's server computes alike; the purge digests
# the rows in its snapshot on the server, deletes them and counts them. A server digest that
# does not match hands the decision to the stream's digest (rows streamed from the source);
# rows a trigger keeps from being deleted roll the purge back; so does a row slipped in past
# the guard. The last group's purge, split over two transactions, stopped and killed between
# their commits.
source "$(dirname "$0")/lib.sh"

fresh_fleet purgedigest --shards 2 --scale 1
before=$(fleet_fingerprint)

step "every table's server digest journaled beside its stream digest; the batches purged as one group"
SHARDCTL_FAULT_TRACE="$TEST_TMP/trace" expect_exit 0 shardctl split --map customers --at 100 --move lower --to shard_2 --batch-size 34
op=$(last_op)
# One purge transaction for the three batches, after the last flip (runner.hpp, PurgeGroup).
assert_eq "$(grep -E '^(journal.flipped|purge)@' "$TEST_TMP/trace" | cut -d' ' -f1 | tr '\n' ' ')" \
  "journal.flipped@b1 journal.flipped@b2 journal.flipped@b3 purge@b1 purge@b2 purge@b3 "
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
# 3 batches x 3 tables of each; a server digest counts the rows its stream digest counts.
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.op_batches, jsonb_each_text(checksum::jsonb) e
  where op_id = '$op' and e.value ~ '^[0-9]+:xxh3:[0-9a-f]{16}$'")" "9"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.op_batches b, jsonb_each_text(b.checksum::jsonb -> 'server') s
  where b.op_id = '$op' and s.value ~ '^values:[0-9]+:-?[0-9]+$'
    and split_part(s.value, ':', 2) = split_part(b.checksum::jsonb ->> s.key, ':', 1)")" "9"

step "a server digest that does not match: the stream's digest decides"
SHARDCTL_FAULT=journal.flipped:2 expect_exit 99 shardctl split --map customers --at 200 --move lower --to shard_2 --batch-size 34
op=$(last_op)
# Batch 1's, in the group that also purges batch 2: the group's sum differs, then
# batch 1's own, and its rows streamed decide.
psql_catalog -qc "update shardctl.op_batches set checksum = jsonb_set(checksum::jsonb, '{server,public.orders}',
  to_jsonb(regexp_replace(checksum::jsonb -> 'server' ->> 'public.orders', ':[-0-9]+\$', ':12345')))::text
  where op_id = '$op' and batch_no = 1"
assert_eq "$(psql_catalog -XAtc "select string_agg(step || ' ' || (checksum::jsonb -> 'server' ->> 'public.orders' like '%:12345'), ', '
  order by batch_no) from shardctl.op_batches where op_id = '$op'")" "flipped true, flipped false"
expect_exit 0 shardctl op resume "$op"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from orders where customer_id >= 100 and customer_id < 200")" "0"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

step "rows a trigger keeps from being deleted roll the purge back"
SHARDCTL_FAULT=journal.flipped:1 expect_exit 99 shardctl split --map customers --at 300 --move lower --to shard_2 --batch-size 100
op=$(last_op)
psql_shard 1 -q <<'SQL'
create function keep_some() returns trigger language plpgsql as $$
begin
  if old.order_id % 2 = 0 then return null; end if;
  return old;
end $$;
create trigger keep_some before delete on orders for each row execute function keep_some();
alter table orders enable always trigger keep_some;
SQL
expect_exit 70 shardctl op resume "$op"
expect_stderr_contains "kept rows from being deleted"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id >= 200 and customer_id < 300")" "100"
psql_shard 1 -qc "drop trigger keep_some on orders"
expect_exit 0 shardctl op resume "$op"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

step "a row slipped in past the guard: both digests differ, rolled back"
SHARDCTL_FAULT=journal.flipped:1 expect_exit 99 shardctl split --map customers --at 400 --move lower --to shard_2 --batch-size 100
op=$(last_op)
status=$(psql_shard 1 -XAtc "select status from orders where customer_id = 310 and order_id = 1")
set_status() {  # past the guard, as a superuser can
  psql_shard 1 -qc "alter table orders disable trigger shardctl_guard, disable trigger shardctl_guard_update;
                    update orders set status = '$1' where customer_id = 310 and order_id = 1;
                    alter table orders enable always trigger shardctl_guard, enable always trigger shardctl_guard_update"
}
set_status changed
expect_exit 70 shardctl op resume "$op"
expect_stderr_contains "rolled back: a write reached the batch's keys past the guard"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id >= 300 and customer_id < 400")" "100"
set_status "$status"
expect_exit 0 shardctl op resume "$op"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

step "a full group (8 batches) purges beside the next batch's copy, and commits after its flip"
SHARDCTL_FAULT_TRACE="$TEST_TMP/trace10" expect_exit 0 shardctl split --map customers --at 500 --move lower --to shard_2 --batch-size 10
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.op_batches where op_id = '$(last_op)'")" "10"
flips() { local i; for i in "$@"; do printf 'journal.flipped@b%s ' "$i"; done; }
purges() { local i; for i in "$@"; do printf 'purge@b%s ' "$i"; done; }
assert_eq "$(grep -E '^(journal.flipped|purge)@' "$TEST_TMP/trace10" | cut -d' ' -f1 | tr '\n' ' ')" \
  "$(flips 1 2 3 4 5 6 7 8 9)$(purges 1 2 3 4 5 6 7 8)$(flips 10)$(purges 9 10)"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id >= 400 and customer_id < 500")" "0"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# The last group's purge splits over two source transactions (purge.cpp): the children's table
# on one, the digests and the parents' tables on the other, which also fences; children commit
# first.
left_in() {  # LO HI: order lines, orders and customers of [LO, HI) still on shard 2
  psql_shard 2 -XAtc "select (select count(*) from order_lines where customer_id >= $1 and customer_id < $2) || ' ' ||
    (select count(*) from orders where customer_id >= $1 and customer_id < $2) || ' ' ||
    (select count(*) from customers where customer_id >= $1 and customer_id < $2)"
}
orders_in() { psql_shard 2 -XAtc "select count(*) from orders where customer_id >= $1 and customer_id < $2"; }
step "frozen between the two commits: the children are gone, the parents still there and still guarded"
SHARDCTL_FAULT_PAUSE=purge.children "$SHARDCTL_BIN/shardctl" split --map customers --at 600 --move lower --to shard_1 \
  --batch-size 50 >"$TEST_TMP/split.out" 2>&1 &
split_pid=$!
trap 'kill -CONT $split_pid 2>/dev/null || true' EXIT  # a failure here must not leave it stopped (a failed test keeps its databases)
wait_stopped "$split_pid" "the split" "$TEST_TMP/split.out"
assert_eq "$(left_in 501 600)" "0 $(orders_in 501 600) 99"
[ "$(orders_in 501 600)" -gt 0 ] || fail "the orders went with the order lines"
op=$(last_op)
# The guard's own refusal (lib/shardside/sql/guard.sql, refuse_range): the batch's range is
# still offline on the source, so the write is told the key is being moved, not that it moved.
out=$(psql_shard 2 -v VERBOSITY=verbose -qc "set session_replication_role = replica; set shardctl.row_guard = off; insert into orders values (550, 999003, now(), 'new')" 2>&1) &&
  fail "a write to a key being purged was let through"
assert_contains "$out" "ERROR:  55000: key 550 of public.orders is being moved by shardctl operation $op to shard shard_1; writes to it are refused until its batch is done"
assert_contains "$out" "CONSTRAINT NAME:  shardctl_moving"
assert_contains "$out" '"state" : "moving", "map" : "customers"'
kill -CONT "$split_pid"
wait "$split_pid" || fail "the split failed: $(cat "$TEST_TMP/split.out")"
trap _drop_made_databases EXIT
assert_eq "$(left_in 501 600)" "0 0 0"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

step "killed between the two commits: the resume finds the children purged and purges the parents"
SHARDCTL_FAULT=purge.children expect_exit 99 shardctl split --map customers --at 700 --move lower --to shard_1 --batch-size 50
op=$(last_op)
assert_eq "$(left_in 600 700)" "0 $(orders_in 600 700) 100"
expect_exit 0 shardctl op resume "$op"
assert_eq "$(left_in 600 700)" "0 0 0"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
