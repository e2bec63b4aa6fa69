# The move's load path: with a superuser role and foreign keys the plan proves, loads and purges
# skip FK triggers (session_replication_role = replica); SHARDCTL_CHECKED_LOAD and a role that
# may not skip triggers take the checked path; an FK the batch cannot prove (not through the
# key) does too. Every path loses nothing, verifies each batch by the streamed digest, and
# `op show` reports the offline windows.
source "$(dirname "$0")/lib.sh"

fresh_fleet fast --shards 2 --scale 1
before=$(fleet_fingerprint)

# First (with schema shardctl made by the move itself, as this role: the fleet's shards were
# prepared as postgres, whose objects another role may not use): a role that may not set
# session_replication_role takes the checked path, with the same result.
role="mover_$$"
for n in 1 2; do
  psql_shard "$n" -qc "drop schema if exists shardctl cascade"
  psql_shard "$n" -qc "do \$\$ begin create role $role login; exception when duplicate_object then null; end \$\$"
  psql_shard "$n" -qc "grant create on database \"$(psql_shard "$n" -XAtc 'select current_database()')\" to $role"
  for t in region product customers orders order_lines; do psql_shard "$n" -qc "alter table $t owner to $role"; done
  psql_shard "$n" -qc "alter schema public owner to $role"
done
psql_catalog -qc "update shardctl.shards set dsn = replace(dsn, 'user=postgres', 'user=$role')"
expect_exit 0 shardctl split --map customers --at 300 --to shard_2 --batch-size 60 -v
expect_stderr_contains "may not set session_replication_role (not superuser)"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
psql_catalog -qc "update shardctl.shards set dsn = replace(dsn, 'user=$role', 'user=postgres')"

expect_exit 0 shardctl split --map customers --at 200 --to shard_2 --dry-run
expect_stdout_contains "load path: fast path: load skips FK triggers"
expect_exit 0 shardctl split --map customers --at 200 --to shard_2 --batch-size 34 -v
expect_stderr_contains "path: fast path"
op=$(last_op)
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
# Each batch journaled the digest of its streamed rows and its offline window.
digests=$(psql_catalog -XAtc "select count(*) from shardctl.op_batches, jsonb_each_text(checksum::jsonb) e
  where op_id = '$op' and e.value ~ '^[0-9]+:xxh3:[0-9a-f]{16}$'")
assert_eq "$digests" "9"  # 3 batches x 3 tables
expect_exit 0 shardctl op show "$op"
expect_stdout_contains "offline:   median"
expect_exit 0 shardctl op show "$op" --format json
[ "$(jq -r '.offline_max_seconds >= .offline_median_seconds and .offline_median_seconds > 0' "$STDOUT")" = true ] ||
  fail "offline windows missing: $(cat "$STDOUT")"

# Asked for: the checked path.
SHARDCTL_CHECKED_LOAD=1 expect_exit 0 shardctl split --map customers --at 400 --to shard_1 --batch-size 40 -v
expect_stderr_contains "checked load and purge: requested"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# An FK between moving tables that does not go through the key: the batch does not prove it.
for n in 1 2; do psql_shard "$n" -qc "alter table customers add column referrer bigint"; done
psql_shard 2 -qc "alter table customers add constraint customers_referrer foreign key (referrer) references customers (customer_id)"
expect_exit 0 shardctl split --map customers --at 450 --to shard_2 --batch-size 40 --dry-run
expect_stdout_contains "checked load: constraint customers_referrer of public.customers references customers without the key column"
for n in 1 2; do psql_shard "$n" -qc "alter table customers drop column referrer"; done

# --verify-fk: a reference table that lacks rows the moved lines need, on the target and on
# the source alike (copies that differ refuse the move first: t_move_references). The plan
# trusts reference tables, so the fast load takes the lines; the anti-join finds them (65).
needed=$(psql_shard 1 -XAtc "select string_agg(distinct product_id::text, ',') from order_lines where customer_id >= 450 and customer_id < 501")
for n in 1 2; do psql_shard "$n" -qc "set session_replication_role = replica; delete from product where product_id in ($needed)"; done
expect_exit 65 shardctl split --map customers --at 450 --to shard_2 --verify-fk
expect_stderr_contains "--verify-fk found orphans on shard_2"
expect_stderr_contains "violate order_lines_product_id_fkey"
assert_fleet_consistent
pass
