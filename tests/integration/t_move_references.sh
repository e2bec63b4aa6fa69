# A move compares the target's filled reference tables with its source's before it copies
# anything (shardctl-split(1), "Reference tables"):
#  - copies that differ (a row changed, one extra on the target, one missing there) refuse the
#    move (64), naming the table, how it differs and the sync-reference command; nothing changed;
#  - --dry-run --sync-references says it would sync, and changes nothing;
#  - --sync-references syncs only the differing rows from the source first, then moves: the
#    copies are identical (check --references is clean) and every sharded row is where the map
#    routes it;
#  - a killed run resumed syncs nothing twice, counted by a trigger that logs every row written
#    into the target's copy with its transaction: killed just before the sync's commit
#    (references.sync.commit@shard_2, lib/refdata/sync.cpp), nothing is written; its resume,
#    killed just after the sync (references.sync, lib/migrate/runner.cpp), writes the three
#    differing rows in one transaction; the last resume writes none.
source "$(dirname "$0")/lib.sh"

fresh_fleet moverefs --shards 2
key=300   # on shard_1
product_md5() { psql_shard "$1" -XAtc "select md5(string_agg(p::text, ',' order by product_id)) from product p"; }
psql_shard 2 -qc "update product set name = 'renamed on shard_2' where product_id = 3" \
  -c "insert into product values (900001, 'only on shard_2', 1, 1)"
psql_shard 1 -qc "insert into product values (900002, 'only on shard_1', 2, 2)"
# Every row written into the target's copy: operation, key and transaction.
psql_shard 2 -q <<'SQL'
create table product_writes (op text, product_id int, xid xid8 default pg_current_xact_id());
create function product_write() returns trigger language plpgsql as $$
begin
  insert into product_writes (op, product_id) values (tg_op, case when tg_op = 'DELETE' then old.product_id else new.product_id end);
  return null;
end $$;
create trigger product_write after insert or update or delete on product for each row execute function product_write();
SQL
writes() { psql_shard 2 -XAtc "select count(distinct xid) || ' ' || coalesce(string_agg(op || ':' || product_id, ' ' order by op, product_id), '')
                               from product_writes"; }
source_products=$(product_md5 1)
target_before=$(product_md5 2)
before=$(fleet_fingerprint)
catalog_before=$(catalog_dump)

step "copies that differ refuse the move"
expect_exit 64 shardctl move --map customers --key $key --to shard_2
expect_stderr_contains 'reference table "public"."product" on shard_2 differs in '
expect_stderr_contains "chunk(s): 1 row(s) missing, 1 extra, 1 changed from shard_1's"
expect_stderr_contains 'shardctl table sync-reference "public"."product" --from shard_1'
expect_stderr_contains "--sync-references"
grep -q '"public"."region"' "$STDERR" && fail "the identical region table was named: $(cat "$STDERR")"
assert_eq "$(catalog_dump)" "$catalog_before"
assert_eq "$(product_md5 2)" "$target_before"

step "--dry-run --sync-references says so and changes nothing"
expect_exit 0 shardctl move --map customers --key $key --to shard_2 --sync-references --dry-run
expect_stderr_contains "synced from shard_1 before the first batch"
assert_eq "$(catalog_dump)" "$catalog_before"
assert_eq "$(product_md5 2)" "$target_before"

step "--sync-references syncs first, then moves; a killed run resumed syncs nothing twice"
assert_eq "$(writes)" "0 "
SHARDCTL_FAULT=references.sync.commit@shard_2 expect_exit 99 shardctl move --map customers --key $key --to shard_2 --sync-references
op=$(last_op)
assert_eq "$(product_md5 2)" "$target_before"
assert_eq "$(writes)" "0 "
SHARDCTL_FAULT=references.sync:1 expect_exit 99 shardctl op resume "$op"
assert_eq "$(product_md5 2)" "$source_products"
synced="1 DELETE:900001 INSERT:900002 UPDATE:3"
assert_eq "$(writes)" "$synced"
expect_exit 0 shardctl op resume "$op"
assert_eq "$(writes)" "$synced"
assert_eq "$(product_md5 2)" "$source_products"
assert_eq "$(product_md5 1)" "$source_products"
expect_exit 0 shardctl check --references
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
