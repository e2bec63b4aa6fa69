# check --fix on a table that references itself: order_lines gains a "replaces" foreign key to
# another line (ON DELETE CASCADE), and a healthy line of customer 5 replaces an orphaned line
# of the same customer. Taking the orphan out would make the database delete the healthy line
# too, out of the quarantine's reach: the fix is refused (64) before any row moves, dry run
# included, and the fleet is unchanged. The check itself still reports the orphans.
source "$(dirname "$0")/lib.sh"

fresh_fleet check_self --shards 2 --scale 1
s=$(shardctl lookup --map customers 5 | cut -f2)
n=${s#shard_}
psql_shard "$n" -q <<'SQL'
alter table order_lines add column replaces_order int, add column replaces_line int,
  add foreign key (customer_id, replaces_order, replaces_line)
      references order_lines (customer_id, order_id, line_no) on delete cascade;
set session_replication_role = replica;
-- an orphan: its order 999 does not exist
insert into order_lines (customer_id, order_id, line_no, product_id, quantity, amount) values (5, 999, 1, 1, 1, 1.00);
-- a healthy line of an existing order that replaces the orphan
update order_lines set replaces_order = 999, replaces_line = 1
 where (customer_id, order_id, line_no) = (select customer_id, order_id, line_no from order_lines
                                           where customer_id = 5 and order_id <> 999 order by order_id, line_no limit 1);
SQL
assert_eq "$(psql_shard "$n" -XAtc "select count(*) from order_lines where replaces_order = 999")" "1"
before=$(fleet_fingerprint)
dump=$(catalog_dump)

expect_exit 2 shardctl check --orphans
expect_stdout_contains "order_lines"
for fix in quarantine delete; do
  for dry in --dry-run ""; do
    expect_exit 64 shardctl check --orphans --fix "$fix" -y $dry
    expect_stderr_contains "references its own table"
    expect_stderr_contains "public.order_lines"
  done
done
assert_eq "$(fleet_fingerprint)" "$before"
assert_eq "$(psql_shard "$n" -XAtc "select count(*) from order_lines where replaces_order = 999")" "1"
assert_eq "$(psql_shard "$n" -XAtc "select count(*) from pg_namespace where nspname = 'shardctl_quarantine'")" "0"
pass
