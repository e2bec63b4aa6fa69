# split through the binary: dry run, a multi-batch split of a range map that loses nothing,
# the write guard during a move, cancel, a hash map split, and bad input refused up front.
source "$(dirname "$0")/lib.sh"

fresh_fleet split --shards 3 --scale 1
before=$(fleet_fingerprint)

# Dry run: the plan, nothing changed.
dump=$(catalog_dump)
expect_exit 0 shardctl split --map customers --at 200 --to shard_3 --batch-size 50 --dry-run
expect_stdout_contains "move keys 200..334 from shard_1 to shard_3"
expect_stdout_contains "batches: 3"
# --batch-size 1: one batch per key (customers 990..1000 are on shard_3).
expect_exit 0 shardctl split --map customers --at 990 --to shard_1 --batch-size 1 --dry-run --format json
assert_eq "$(jq -r '.batches | length' "$STDOUT")" "11"
assert_eq "$(jq -r '[.batches[].keys] | add' "$STDOUT")" "11"
assert_eq "$(catalog_dump)" "$dump"

# Bad input, each refused before anything changes.
expect_exit 64 shardctl split --map customers --at 5000000 --to shard_2 --batch-size 0
expect_stderr_contains "batch-size"
expect_exit 64 shardctl split --map customers --at 200 --to shard_1
expect_stderr_contains "already holds"
expect_exit 64 shardctl split --map customers --at 334 --to shard_3
expect_stderr_contains "nothing to split"
expect_exit 64 shardctl split --map customers --at abc --to shard_2
expect_exit 64 shardctl split --map nosuch --at 5 --to shard_2
expect_exit 64 shardctl split --map customers --at 200 --to nosuch
shardctl shard set shard_3 --status readonly >/dev/null
expect_exit 64 shardctl split --map customers --at 200 --to shard_3
expect_stderr_contains "target shard shard_3 is readonly"
shardctl shard set shard_3 --status online >/dev/null
# A shard's status change is a change of the maps that route to it (their version, catalog 12).
dump=$(catalog_dump)
psql_shard 3 -qc "insert into customers values (250, 'squatter', 1, now())"
expect_exit 64 shardctl split --map customers --at 200 --to shard_3
expect_stderr_contains "not empty on shard_3"
psql_shard 3 -qc "delete from customers where customer_id = 250"
psql_shard 3 -qc "alter table order_lines rename to order_lines_x"
expect_exit 64 shardctl split --map customers --at 200 --to shard_3
expect_stderr_contains "public.order_lines is missing on target shard shard_3"
psql_shard 3 -qc "alter table order_lines_x rename to order_lines"
assert_eq "$(catalog_dump)" "$dump"

# The write guard: stop after batch 2 went offline; writes to its keys fail from plain psql,
# writes to other keys work.
SHARDCTL_FAULT=journal.offline:2 expect_exit 99 shardctl split --map customers --at 200 --to shard_3 --batch-size 50
op=$(last_op)
err=$(psql_shard 1 -qc "update customers set name = 'x' where customer_id = 260" 2>&1) && fail "write to a moving key succeeded"
assert_contains "$err" "is being moved by shardctl"
psql_shard 1 -qc "update customers set name = name where customer_id = 100"
psql_shard 1 -qc "update customers set name = name where customer_id = 320"
expect_exit 75 shardctl split --map customers --at 310 --to shard_2
expect_stderr_contains "already works on an overlapping range"
expect_exit 0 shardctl op show "$op" --format json
# Batch 1 is flipped (its keys live on shard_3) but not yet purged: its purge runs beside
# batch 2's verify.
assert_eq "$(jq -r .batches_done "$STDOUT")" "0"
assert_eq "$(psql_catalog -XAtc "select string_agg(step, ' ' order by batch_no) from shardctl.op_batches where op_id = '$op'")" \
  "flipped offline planned"
expect_exit 0 shardctl op resume "$op"
expect_stdout_contains "done: 3/3"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
expect_exit 0 shardctl mapping list --map customers --format json
assert_eq "$(jq -r '.mappings | map(.range + ">" + .shard) | join(" ")' "$STDOUT")" "..200>shard_1 200..334>shard_3 334..667>shard_2 667..>shard_3"

# Cancel: stop after the first batch flipped (its purge waits for the next batch's verify);
# what moved stays moved and is purged, the rest stays on the source.
SHARDCTL_FAULT=journal.flipped:1 expect_exit 99 shardctl split --map customers --at 400 --to shard_1 --batch-size 100
op=$(last_op)
expect_exit 0 shardctl op cancel "$op"
expect_stdout_contains "cancelled"
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r .status "$STDOUT")" "cancelled"
assert_eq "$(jq -r .batches_done "$STDOUT")" "1"
expect_exit 0 shardctl mapping list --map customers --format json
assert_eq "$(jq -r '.mappings | map(.range + ">" + .shard) | join(" ")' "$STDOUT")" \
  "..200>shard_1 200..334>shard_3 334..400>shard_2 400..500>shard_1 500..667>shard_2 667..>shard_3"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
expect_exit 0 shardctl op wait "$op"

# A reference table already filled on the target, and identical to the source's, is simply
# used (t_move_references: one that differs).
expect_exit 0 shardctl split --map customers --at 700 --to shard_1 --batch-size 1000 --dry-run
grep -q "reference table" "$STDERR" && fail "identical reference copies warned about: $(cat "$STDERR")"

# --move lower: the lower side of the mapping moves.
expect_exit 0 shardctl split --map customers --at 600 --to shard_1 --move lower --batch-size 40
expect_exit 0 shardctl mapping list --map customers --format json
assert_eq "$(jq -r '.mappings | map(.range + ">" + .shard) | join(" ")' "$STDOUT")" \
  "..200>shard_1 200..334>shard_3 334..400>shard_2 400..500>shard_1 500..600>shard_1 600..667>shard_2 667..>shard_3"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# JSON result of a whole split.
expect_exit 0 shardctl split --map customers --at 800 --to shard_1 --batch-size 1000 --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
