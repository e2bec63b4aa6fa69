# check --strays: rows on a shard the map does not route them to, in a range map and in a hash
# map (the hash computed server-side), with exact counts and keys; --fix rehome moves them to
# their shard (verified), after which there are none and no row was lost or changed.
source "$(dirname "$0")/lib.sh"

fresh_fleet check_strays --shards 3 --scale 1
# customers ..334 on shard_1, 334..667 on shard_2, 667.. on shard_3

# A hash map over text keys with one table, filled where the map routes every key.
shardctl map create tenants --kind hash --key-type text --shards shard_1,shard_2,shard_3 >/dev/null
for i in 1 2 3; do psql_shard $i -qc "create table public.tenant_notes (tenant text primary key, note text not null)"; done
shardctl table add-sharded public.tenant_notes --map tenants --key tenant >/dev/null
for t in $(seq 1 60); do echo "tenant-$t"; done | shardctl lookup --map tenants - > "$TEST_TMP/routes"
for i in 1 2 3; do
  values=$(awk -F'\t' -v s="shard_$i" '$2 == s {printf "%s(\x27%s\x27, \x27note\x27)", (n++ ? "," : ""), $1}' "$TEST_TMP/routes")
  psql_shard $i -qc "insert into tenant_notes values $values"
done
expect_exit 0 shardctl check --strays --format json
assert_eq "$(jq -r '.findings | length' "$STDOUT")" "0"
before=$(fleet_fingerprint)

# Range map strays: customer 5000 (routed to shard_3) with an order and two lines on shard_1;
# a line of customer 400 (routed to shard_2) on shard_3.
psql_shard 1 -qc "insert into customers values (5000, 'stray', 1, '2024-01-01');
  insert into orders values (5000, 1, '2024-01-01', 'new');
  insert into order_lines values (5000, 1, 1, 1, 1, 1.00), (5000, 1, 2, 2, 2, 2.00)"
psql_shard 3 -qc "set session_replication_role = replica; insert into order_lines values (400, 99, 1, 1, 1, 1.00)"
psql_shard 2 -qc "insert into orders values (400, 99, '2024-01-01', 'new')"
# Hash map strays: two tenants that belong elsewhere, on a shard that is not theirs.
wrong=() ; for t in tenant-61 tenant-62; do
  home=$(shardctl lookup --map tenants "$t" | cut -f2)
  other=$(( ${home#shard_} % 3 + 1 ))
  psql_shard $other -qc "insert into tenant_notes values ('$t', 'stray')"
  wrong+=("shard_$other $t")
done

expect_exit 2 shardctl check --strays --format json
assert_eq "$(jq -c '[.findings[] | select(.object == "customers") | [.shard, .table, .count, .samples]]' "$STDOUT")" \
  '[["shard_1","public.customers",1,["5000"]],["shard_1","public.order_lines",2,["5000,1,1","5000,1,2"]],["shard_1","public.orders",1,["5000,1"]],["shard_3","public.order_lines",1,["400,99,1"]]]'
got=$(jq -r '[.findings[] | select(.object == "tenants") | .samples[] as $k | .shard + " " + $k] | sort | join(";")' "$STDOUT")
assert_eq "$got" "$(printf '%s\n' "${wrong[@]}" | sort | paste -sd';')"
assert_eq "$(jq -r '[.findings[] | select(.object == "tenants") | .count] | add' "$STDOUT")" "2"
expect_exit 2 shardctl check --strays --format nagios
expect_stdout_contains "SHARDCTL CRITICAL - 1 stray customers row on 1 shard, 3 stray order_lines rows on 2 shards, 1 stray orders row on 1 shard, 2 stray tenant_notes rows on"

# Rehome: dry run first (nothing moves), then for real.
with_strays=$(fleet_fingerprint)
dump=$(catalog_dump)
expect_exit 2 shardctl check --strays --fix rehome --dry-run --format json
assert_eq "$(jq -r '[.fixes[] | select(.dry_run) | .rows] | add' "$STDOUT")" "7"
assert_eq "$(fleet_fingerprint)" "$with_strays"
assert_eq "$(catalog_dump)" "$dump"

expect_exit 0 shardctl check --strays --fix rehome --format json
assert_eq "$(jq -c '[.fixes[] | select(.table != "public.tenant_notes") | [.shard, .table, .target, .rows]]' "$STDOUT")" \
  '[["shard_1","public.order_lines","shard_3",2],["shard_1","public.orders","shard_3",1],["shard_1","public.customers","shard_3",1],["shard_3","public.order_lines","shard_2",1]]'
assert_eq "$(jq -r '[.fixes[] | select(.table == "public.tenant_notes") | .rows] | add' "$STDOUT")" "2"
op=$(jq -r .operation "$STDOUT")
expect_exit 0 shardctl check --strays --format json
assert_eq "$(jq -r '.summary.strays' "$STDOUT")" "0"
assert_eq "$(fleet_fingerprint)" "$with_strays"
assert_eq "$(psql_shard 3 -XAtc "select count(*) from order_lines where customer_id = 5000")" "2"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from order_lines where customer_id = 400 and order_id = 99")" "1"
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r '.kind + " " + .status' "$STDOUT")" "check-rehome done"

# Rehome is idempotent: killed after the target committed and before the source deleted, the
# rows are on both shards; the next rehome finds them landed (same key, same contents) and only
# deletes the source's copies.
psql_shard 1 -qc "insert into customers values (5001, 'stray', 1, '2024-01-01');
  insert into orders values (5001, 1, '2024-01-01', 'new');
  insert into order_lines values (5001, 1, 1, 3, 3, 3.00)"
with_new=$(fleet_fingerprint)
SHARDCTL_FAULT=rehome.landed expect_exit 99 shardctl check --strays --fix rehome
assert_eq "$(psql_shard 3 -XAtc "select count(*) from order_lines where customer_id = 5001")" "1"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from order_lines where customer_id = 5001")" "1"
expect_exit 0 shardctl check --strays --fix rehome --format json
assert_eq "$(jq -c '[.fixes[] | [.shard, .table, .target, .rows]]' "$STDOUT")" \
  '[["shard_1","public.order_lines","shard_3",1],["shard_1","public.orders","shard_3",1],["shard_1","public.customers","shard_3",1]]'
expect_exit 0 shardctl check --strays
assert_eq "$(fleet_fingerprint)" "$with_new"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from order_lines where customer_id = 5001")" "0"

# A stray whose key is already present on its home shard with other contents is not copied
# over it: the rehome is refused before anything changes: exit 64.
psql_shard 1 -qc "set session_replication_role = replica; insert into order_lines values (400, 99, 1, 7, 7, 7.00)"
now=$(fleet_fingerprint)
expect_exit 64 shardctl check --strays --fix rehome
expect_stderr_contains "exist on shard_2 with other contents"
expect_stderr_contains "nothing was changed"
assert_eq "$(fleet_fingerprint)" "$now"
expect_exit 64 shardctl check --orphans --fix rehome

# Many ranges: shard_1's mapping ..334 cut into 334 ranges (..1 and one per key). Same
# coverage, same answer: only the conflicting stray line is left.
psql_catalog -qc "with m as (delete from shardctl.mappings where int_range = int8range(null, 334) returning map_id, shard_id)
  insert into shardctl.mappings (map_id, shard_id, int_range)
  select map_id, shard_id, int8range(k, k + 1) from m, generate_series(1, 333) k
  union all select map_id, shard_id, int8range(null, 1) from m"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.mappings m join shardctl.shards s using (shard_id) join shardctl.maps mp using (map_id) where s.name = 'shard_1' and mp.name = 'customers'")" "334"
expect_exit 2 shardctl check --format json
assert_eq "$(jq -c '[.findings[] | [.kind, .shard, .table, .count, .samples]]' "$STDOUT")" \
  '[["strays","shard_1","public.order_lines",1,["400,99,1"]]]'

# A list map over text keys: a key on the wrong shard and a key no point maps.
shardctl map create codes --kind list --key-type text >/dev/null
shardctl mapping add --map codes --point eu --shard shard_1 >/dev/null
shardctl mapping add --map codes --point us --shard shard_2 >/dev/null
shardctl mapping add --map codes --point "o'hare" --shard shard_3 >/dev/null
for i in 1 2 3; do psql_shard $i -qc "create table public.code_notes (code text primary key, note text not null)"; done
shardctl table add-sharded public.code_notes --map codes --key code >/dev/null
psql_shard 1 -qc "insert into code_notes values ('eu', 'home'), ('xx', 'nowhere')"
psql_shard 2 -qc "insert into code_notes values ('us', 'home')"
psql_shard 3 -qc "insert into code_notes values ('o''hare', 'home'), ('us', 'stray')"
expect_exit 2 shardctl check --strays --format json
assert_eq "$(jq -c '[.findings[] | select(.table == "public.code_notes") | [.shard, .count, .samples, .detail]]' "$STDOUT")" \
  '[["shard_1",1,["xx"],"0 routed to another shard, 1 routed to no shard (samples: code)"],["shard_3",1,["us"],"1 routed to another shard, 0 routed to no shard (samples: code)"]]'
pass
