# A tree of rows (tasks by parent_id) archived over two runs, restored: each run takes only the
# rows nothing references any more (the leaf first, its parent in the next run). Restoring the
# leaf's run first finds its parent still archived: exit 64 with a hint naming the order, and
# nothing of the batch changes. Restoring the parent's run, then the leaf's, brings both back.
source "$(dirname "$0")/lib.sh"

fresh_fleet tree_restore --shards 2 --scale 1
for i in 1 2; do
  psql_shard "$i" -qc "create table tasks (customer_id bigint not null, id int, parent_id int, closed date,
                         primary key (customer_id, id),
                         foreign key (customer_id, parent_id) references tasks (customer_id, id) on delete cascade)"
done
n=$(shardctl lookup --map customers 5 | cut -f2); n=${n#shard_}
psql_shard "$n" -qc "insert into tasks values (5, 1, null, '2020-01-01'), (5, 2, 1, '2020-01-02'), (5, 3, null, null)"
shardctl table add-sharded tasks --map customers --key customer_id >/dev/null
tasks() { psql_shard "$n" -XAtc "select string_agg(id || ':' || coalesce(parent_id::text, '-'), ',' order by id) from tasks"; }

expect_exit 0 shardctl archive run --table tasks --where "closed is not null" --to "dir:$TEST_TMP/a" --format json
leaf_run=$(jq -r .id "$STDOUT")
assert_eq "$(tasks)" "1:-,3:-"
expect_exit 0 shardctl archive run --table tasks --where "closed is not null" --to "dir:$TEST_TMP/a" --format json
root_run=$(jq -r .id "$STDOUT")
assert_eq "$(tasks)" "3:-"

expect_exit 64 shardctl archive restore "$leaf_run"
expect_stderr_contains "foreign key"
expect_stderr_contains "restore first the run that archived that row"
assert_eq "$(tasks)" "3:-"
expect_exit 0 shardctl archive restore "$root_run"
expect_exit 0 shardctl archive restore "$leaf_run"
assert_eq "$(tasks)" "1:-,2:1,3:-"
pass
