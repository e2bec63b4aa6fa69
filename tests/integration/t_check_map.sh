# check --map-consistency: a live operation's guard and offline mapping are not findings; an
# expired lease, a stale offline mapping and left-over guards are; unmapped key space in range
# and hash maps, mappings to readonly/offline shards, a missing table. Exit 3 names an
# unreachable shard while the others are still checked.
source "$(dirname "$0")/lib.sh"

fresh_fleet check_map --shards 3 --scale 1
kinds() { jq -c '[.findings[] | [.kind, .severity, .shard, .table, .object, .count]]' "$STDOUT"; }

# Shard-side guard state is made by hand (schema shardctl: guard_ranges and the guard
# triggers), so this test does not depend on how the runner writes it. reset_guards N drops
# every guard trigger and guard table on shard N and creates an empty shardctl.guard_ranges.
reset_guards() {
  psql_shard "$1" -q <<'SQL'
set client_min_messages = warning;
do $$ declare r record; begin
  for r in select t.tgname, t.tgrelid::regclass::text rel from pg_trigger t
           where t.tgname in ('shardctl_guard', 'shardctl_guard_truncate', 'shardctl_guard_route') and not t.tgisinternal loop
    execute format('drop trigger %I on %s', r.tgname, r.rel);
  end loop;
end $$;
create schema if not exists shardctl;
drop table if exists shardctl.offline_ranges;
drop table if exists shardctl.guard_ranges cascade;
create table shardctl.guard_ranges (
  range_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  op_id uuid NOT NULL, map_id bigint NOT NULL, batch_no integer NOT NULL, lo text, hi text,
  state text NOT NULL, new_shard text NOT NULL, purge_xid xid8, expires_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now());
create or replace function shardctl.test_guard() returns trigger language plpgsql as $f$ begin return null; end $f$;
SQL
}
# add_guard_triggers N TABLE: shardctl_guard (row) and shardctl_guard_truncate (statement), ENABLE ALWAYS.
add_guard_triggers() {
  psql_shard "$1" -qc "create trigger shardctl_guard after insert or update or delete on $2
                         for each row execute function shardctl.test_guard();
                       create trigger shardctl_guard_truncate after truncate on $2
                         for each statement execute function shardctl.test_guard();
                       alter table $2 enable always trigger shardctl_guard;
                       alter table $2 enable always trigger shardctl_guard_truncate"
}
# add_route_trigger N TABLE: the light trigger shardctl_guard_route (lib/migrate/guard.hpp), ENABLE ALWAYS.
add_route_trigger() {
  psql_shard "$1" -qc "create trigger shardctl_guard_route before insert or update or delete on $2
                         for each statement execute function shardctl.test_guard();
                       alter table $2 enable always trigger shardctl_guard_route"
}
map_id=$(psql_catalog -XAtc "select map_id from shardctl.maps where name = 'customers'")

# A split stopped after its second batch went offline: guard and offline mapping belong to a
# live (resumable) operation.
SHARDCTL_FAULT=journal.offline:2 expect_exit 99 shardctl split --map customers --at 200 --to shard_3 --batch-size 50
op=$(last_op)
for n in 1 2 3; do reset_guards $n; done
psql_shard 1 -qc "insert into shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard)
                  values ('$op', $map_id, 1, '200', '250', 'fenced', 'shard_3'), ('$op', $map_id, 2, '250', '300', 'offline', 'shard_3')"
for t in public.customers public.orders public.order_lines; do add_guard_triggers 1 $t; done
expect_exit 0 shardctl check --map-consistency --format json
assert_eq "$(kinds)" "[]"

# Its lease expired and nobody holds its lock: a warning that names the operation.
psql_catalog -qc "update shardctl.operations set lease_until = now() - interval '1 minute' where op_id = '$op'"
expect_exit 1 shardctl check --map-consistency --format json
assert_eq "$(kinds)" "[[\"expired_lease\",\"warning\",null,null,\"operation $op\",1]]"

# The operation is over but left its offline mapping and guards behind. On shard_1 its
# offline range is left over; its fence is expected (not a finding) until it expires. A fence
# of an operation the catalog does not know is left over. On shard_2, a guard trigger without
# any guard_ranges table; on shard_3, one whose map has no range there (only another map's).
psql_catalog -qc "update shardctl.operations set status = 'done' where op_id = '$op'"
offline=$(psql_catalog -XAtc "select int_range from shardctl.mappings where status = 'offline'")
unknown=00000000-0000-4000-8000-000000000001
psql_shard 1 -qc "insert into shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard)
                  values ('$unknown', $map_id, 1, '5', '6', 'fenced', 'shard_2')"
psql_shard 2 -qc "set client_min_messages = warning; drop table shardctl.guard_ranges cascade"
add_guard_triggers 2 public.orders
psql_shard 3 -qc "insert into shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard)
                  values ('$unknown', $((map_id + 100)), 7, 'a', null, 'offline', 'shard_1')"
add_guard_triggers 3 public.order_lines
add_route_trigger 3 public.customers
expect_exit 2 shardctl check --map-consistency --format json
assert_eq "$(jq -c '[.findings[] | select(.kind == "offline_mapping") | [.severity, .shard, .object]]' "$STDOUT")" \
  "[[\"critical\",\"shard_1\",\"customers $offline\"]]"
shard_guards() { jq -c '[.findings[] | select(.kind == "leftover_guard" and .shard != null and (.object | startswith("operation ") | not))
                         | [.shard, .table, .object, .count, .samples, (.detail | split(":")[0])]] | sort' "$STDOUT"; }
assert_eq "$(shard_guards)" "$(jq -nc --arg op "$op" --arg u "$unknown" '[
  ["shard_1", null, "guard ranges of operation \($op)", 1, ["#2 250..300"], "offline key ranges of an operation that is done"],
  ["shard_1", null, "guard ranges of operation \($u)", 1, ["#1 5..6 -> shard_2"], "fenced key ranges of an operation the catalog does not know"],
  ["shard_2", "public.orders", "trigger shardctl_guard", 1, [], "write guard trigger, but map customers has no guarded key ranges and no route floor on this shard"],
  ["shard_2", "public.orders", "trigger shardctl_guard_truncate", 1, [], "write guard trigger, but map customers has no guarded key ranges and no route floor on this shard"],
  ["shard_3", null, "guard ranges of operation \($u)", 1, ["#7 a.."], "offline key ranges of an operation that is unknown"],
  ["shard_3", "public.customers", "trigger shardctl_guard_route", 1, [], "write guard trigger, but map customers has no guarded key ranges and no route floor on this shard"],
  ["shard_3", "public.order_lines", "trigger shardctl_guard", 1, [], "write guard trigger, but map customers has no guarded key ranges and no route floor on this shard"],
  ["shard_3", "public.order_lines", "trigger shardctl_guard_truncate", 1, [], "write guard trigger, but map customers has no guarded key ranges and no route floor on this shard"]
] | sort')"
assert_eq "$(jq -r '[.findings[] | select(.kind == "leftover_guard" and (.object | startswith("operation "))) | .table] | sort | join(",")' "$STDOUT")" \
  "$(psql_catalog -XAtc "select string_agg(table_name, ',' order by table_name) from shardctl.guards where op_id = '$op'")"
assert_eq "$(jq -r '.summary.expired_lease' "$STDOUT")" "0"
expect_exit 2 shardctl check --map-consistency --format nagios
expect_stdout_contains "SHARDCTL CRITICAL - 1 offline mapping without operation, "
expect_stdout_contains "left-over write guards | "
# A fence past its expiry is left over, with the command that lifts it.
psql_shard 1 -qc "update shardctl.guard_ranges set expires_at = now() - interval '1 hour' where op_id = '$op' and batch_no = 1"
expect_exit 2 shardctl check --map-consistency --format json
assert_eq "$(jq -r --arg op "$op" '[.findings[] | select(.object == "guard ranges of operation \($op)") | .detail | select(startswith("fences past"))] | length' "$STDOUT")" "1"
expect_stdout_contains "lift them with \`shardctl op unfence $op\`"
# A route floor of the map on shard_3: its light trigger there checks it, not a finding.
psql_shard 3 -qc "create table if not exists shardctl.route_floors (map_id bigint primary key, map_name text not null,
                    min_version bigint not null, op_id uuid, new_shard text, raised_at timestamptz);
                  insert into shardctl.route_floors (map_id, map_name, min_version) values ($map_id, 'customers', 2)"
expect_exit 2 shardctl check --map-consistency --format json
assert_eq "$(jq -r '[.findings[] | select(.kind == "leftover_guard" and .shard == "shard_3" and .table != null)] | length' "$STDOUT")" "0"
psql_shard 3 -qc "delete from shardctl.route_floors where map_id = $map_id"

# A second fleet: unmapped key space, a readonly shard, a missing table.
fresh_fleet check_map2 --shards 3 --scale 1
shardctl map create tenants --kind hash --key-type text --shards shard_1,shard_2 >/dev/null
hash_range=$(shardctl mapping list --map tenants --format json | jq -r '.mappings[1].range')
shardctl mapping remove --map tenants --range "$hash_range" >/dev/null
psql_catalog -qc "update shardctl.mappings set int_range = int8range(334, 600) where int_range = int8range(334, 667)"
shardctl shard set shard_2 --status readonly >/dev/null
psql_shard 3 -qc "alter table order_lines rename to order_lines_gone"
expect_exit 2 shardctl check --map-consistency --format json
assert_eq "$(kinds)" "[[\"mapping_readonly_shard\",\"warning\",\"shard_2\",null,\"customers 334..600\",1],[\"unmapped_keys\",\"critical\",null,null,\"customers 600..667\",1],[\"unmapped_keys\",\"critical\",null,null,\"tenants $hash_range\",1],[\"missing_table\",\"critical\",\"shard_3\",\"public.order_lines\",\"customers\",1]]"
expect_exit 2 shardctl check --format json
assert_eq "$(jq -r '[.findings[] | select(.kind == "missing_table")] | length' "$STDOUT")" "1"
psql_shard 3 -qc "alter table order_lines_gone rename to order_lines"
shardctl shard set shard_2 --status online >/dev/null
psql_catalog -qc "update shardctl.mappings set int_range = int8range(334, 667) where int_range = int8range(334, 600)"
shardctl mapping add --map tenants --range "$hash_range" --shard shard_1 >/dev/null
expect_exit 0 shardctl check --format json
assert_eq "$(kinds)" "[]"

# An unreachable shard: exit 3 naming it; every other shard is still checked.
shardctl shard add shard_x --dsn "host=$SANDBOX_RUN port=6499 user=postgres dbname=nowhere" >/dev/null
psql_catalog -qc "update shardctl.mappings set int_range = int8range(667, 1000000) where int_range = int8range(667, null)"
shardctl mapping add --map customers --range 1000000.. --shard shard_x >/dev/null
expect_exit 3 shardctl check --format json
assert_eq "$(jq -r '.status + " " + (.unreachable | map(.shard) | join(",")) + " " + (.shards | join(","))' "$STDOUT")" \
  "unknown shard_x shard_1,shard_2,shard_3,shard_x"
assert_eq "$(kinds)" "[]"
expect_exit 3 shardctl check --format nagios
expect_stdout_contains "SHARDCTL UNKNOWN - shard shard_x unreachable | "
expect_stdout_contains " unreachable_shards=1"
expect_exit 3 shardctl check
expect_stdout_contains "shard shard_x unreachable: cannot connect to shard shard_x"
# A critical finding elsewhere still wins over the unknown.
psql_shard 2 -qc "set session_replication_role = replica; delete from orders where customer_id = 400 and order_id = 1"
expect_exit 2 shardctl check --orphans --format json
assert_eq "$(jq -r '.unreachable[0].shard + " " + .findings[0].shard' "$STDOUT")" "shard_x shard_2"
# The catalog itself unreachable: exit 69, and still one Nagios line saying why.
expect_exit 69 shardctl check --format nagios --catalog "host=$SANDBOX_RUN port=6499 user=postgres dbname=nowhere"
assert_eq "$(wc -l < "$STDOUT")" "1"
expect_stdout_contains "SHARDCTL UNKNOWN - cannot connect to catalog"
# Marked offline, the shard is not swept; the mapping to it is the finding.
shardctl shard set shard_x --status offline >/dev/null
expect_exit 2 shardctl check --map-consistency --format json
assert_eq "$(kinds)" '[["mapping_offline_shard","critical","shard_x",null,"customers 1000000..",1]]'

# Between a batch's flip and its purge, a live split has the batch's rows on both shards:
# not strays while the operation lives; strays once it is over without purging.
fresh_fleet check_map3 --shards 3 --scale 1
SHARDCTL_FAULT=journal.flipped:2 expect_exit 99 shardctl split --map customers --at 200 --to shard_3 --batch-size 50
op=$(last_op)
# The shard-side guard state as the new design has it, by hand (see reset_guards).
for n in 1 2 3; do reset_guards $n; done
map_id=$(psql_catalog -XAtc "select map_id from shardctl.maps where name = 'customers'")
psql_shard 1 -qc "insert into shardctl.guard_ranges (op_id, map_id, batch_no, lo, hi, state, new_shard)
                  values ('$op', $map_id, 2, '250', '300', 'offline', 'shard_3')"
for t in public.customers public.orders public.order_lines; do add_guard_triggers 1 $t; done
misplaced=$(psql_shard 1 -XAtc "select customer_id from customers" | shardctl lookup --map customers - 2>/dev/null |
  awk -F'\t' '$2 != "shard_1"' | wc -l)
[ "$misplaced" -gt 0 ] || fail "the interrupted split left no rows on both shards"
expect_exit 0 shardctl check --format json
assert_eq "$(kinds)" "[]"
psql_catalog -qc "update shardctl.operations set status = 'done' where op_id = '$op'"
expect_exit 2 shardctl check --strays --format json
assert_eq "$(jq -r '[.findings[] | select(.table == "public.customers")] | map(.shard + " " + (.count | tostring)) | join(",")' "$STDOUT")" \
  "shard_1 $misplaced"
pass
