# A dry run runs every check the real run would and stops only before the first write: the same
# exit code and the same message as the real run, and nothing changed.
source "$(dirname "$0")/lib.sh"

fresh_fleet dry --empty
shardctl shard add shard_1 --dsn "$(shard_dsn 1)" >/dev/null
shardctl shard add shard_2 --dsn "$(shard_dsn 2)" >/dev/null
shardctl map create customers --kind range --key-type bigint >/dev/null
shardctl map create tenants --kind list --key-type text >/dev/null
shardctl mapping add --map customers --range ..1000 --shard shard_1 >/dev/null
shardctl table add-sharded customers --map customers --key customer_id >/dev/null

# same_as_real EXIT CMD...: the dry run and the real run exit alike with the same stderr, and
# neither changes the catalog (both are refused).
same_as_real() {
  local want=$1; shift
  local before; before=$(catalog_dump)
  expect_exit "$want" shardctl "$@" --dry-run
  [ ! -s "$STDOUT" ] || { cat "$STDOUT" >&2; fail "dry run printed a plan before failing: $*"; }
  local dry_err; dry_err=$(cat "$STDERR")
  expect_exit "$want" shardctl "$@"
  assert_eq "$(cat "$STDERR")" "$dry_err"
  assert_eq "$(catalog_dump)" "$before"
}

same_as_real 64 shard add x --dsn 'postgresql://u:secret@h/db'
same_as_real 64 shard add 'bad name!' --dsn dbname=x
same_as_real 64 shard add shard_1 --dsn dbname=x
same_as_real 64 map create 'bad name!' --kind range --key-type int
same_as_real 64 map create customers --kind range --key-type int
same_as_real 64 map create h --kind hash --key-type int --shards shard_1,nosuch
same_as_real 64 map create h --kind range --key-type int --shards shard_1
same_as_real 64 mapping add --map customers --range 0..10 --shard shard_1
same_as_real 64 mapping add --map customers --point 5 --shard shard_1
same_as_real 64 mapping add --map tenants --range a..b --shard shard_1
same_as_real 64 mapping add --map customers --range 2000..3000 --shard nosuch
same_as_real 64 mapping remove --map customers --range 5..6
same_as_real 64 xref remove nosuch
same_as_real 64 table remove nosuch
same_as_real 64 table add-sharded 'x y z' --map customers --key k
same_as_real 64 table add-sharded customers --map customers --key customer_id
same_as_real 64 table add-sharded t2 --map nosuch --key k
same_as_real 64 xref add x --child 'nosuch(a)' --parent 'customers(customer_id)' --route a --map customers
same_as_real 64 shard set nosuch --status readonly
same_as_real 64 shard remove shard_1
same_as_real 64 map drop customers
same_as_real 64 op cancel 00000000-0000-0000-0000-000000000000
same_as_real 64 op resume not-an-id
same_as_real 64 split --map customers --at 500 --to nosuch
same_as_real 64 sandbox fleet 'Bad!' --dir "$SHARDCTL_TEST_SANDBOX"

# Dry runs that pass print what would happen, change nothing, and mark JSON as a dry run.
before=$(catalog_dump)
expect_exit 0 shardctl shard add shard_3 --dsn "host=h dbname=three" --dry-run
expect_stdout_contains "would add shard shard_3 (dbname=three host=h, online)"
expect_exit 0 shardctl map create h --kind hash --key-type int --shards shard_1,shard_2 --dry-run
expect_stdout_contains "would map hash range ..0 to shard_1"
expect_exit 0 shardctl mapping add --map customers --range 1000..2000 --shard shard_2 --dry-run --format json
assert_eq "$(jq -r '.dry_run' "$STDOUT")" true
assert_eq "$(jq -r '.shard' "$STDOUT")" shard_2
expect_exit 0 shardctl table add-sharded '"Orders"' --map customers --key customer_id --dry-run
expect_stdout_contains 'would declare public."Orders" sharded by customer_id on map customers'
expect_exit 0 shardctl shard remove shard_1 --force --dry-run
expect_exit 0 shardctl map drop customers --force --dry-run --format json
assert_eq "$(jq -r '.dry_run' "$STDOUT")" true
expect_exit 0 shardctl init --dry-run
expect_stdout_contains "up to date"
assert_eq "$(catalog_dump)" "$before"

# The same commands for real do what the dry runs said.
expect_exit 0 shardctl mapping add --map customers --range 1000..2000 --shard shard_2
expect_stdout_contains "mapped range 1000..2000 of map customers to shard shard_2"
pass
