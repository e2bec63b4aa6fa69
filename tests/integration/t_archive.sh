# archive run through the binary on the sample schema: a 3-level cascade (customers -> orders
# -> order_lines) to a PostgreSQL archive database and to a directory; without --cascade, root
# rows that are still referenced stay and are reported; dry run; list/show; op integration;
# a second run while one holds the job (75); bad input refused before anything changes; restore.
source "$(dirname "$0")/lib.sh"

fresh_fleet arch --shards 2 --scale 1
_unique archdb
ARCH_DB=$UNIQUE_NAME
psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$ARCH_DB\"" >/dev/null
ARCH="$CATALOG_CLUSTER dbname=$ARCH_DB"
psql_arch() { psql -X -v ON_ERROR_STOP=1 "$ARCH" "$@"; }
count_all() {  # table: rows on both shards
  echo $(( $(psql_shard 1 -XAtc "select count(*) from $1") + $(psql_shard 2 -XAtc "select count(*) from $1") ))
}
hash_all() {  # table: an order-independent digest of every row on both shards
  for n in 1 2; do psql_shard "$n" -XAtc "select md5(t::text) from $1 t"; done | sort | md5sum
}

cust0=$(count_all customers); ord0=$(count_all orders); lines0=$(count_all order_lines)
# Cold customers: created before 2024-03-01 (days 0..59 of the sample's year).
cold_c=$(( $(psql_shard 1 -XAtc "select count(*) from customers where created_at < '2024-03-01'") +
           $(psql_shard 2 -XAtc "select count(*) from customers where created_at < '2024-03-01'") ))
cold_o=$(( $(psql_shard 1 -XAtc "select count(*) from orders o join customers c using (customer_id) where c.created_at < '2024-03-01'") +
           $(psql_shard 2 -XAtc "select count(*) from orders o join customers c using (customer_id) where c.created_at < '2024-03-01'") ))
[ "$cold_c" -gt 0 ] && [ "$cold_o" -gt 0 ] || fail "the sample has no cold rows"
cold_rows_before=$(for n in 1 2; do psql_shard "$n" -XAtc "select md5(c::text) from customers c where created_at < '2024-03-01'"; done | sort | md5sum)

cat > shardctl.toml <<TOML
catalog = "$SHARDCTL_CATALOG"
[[archive.job]]
name = "cold-customers"
table = "customers"
where = "created_at < '2024-03-01'"
cascade = true
to = "postgres:$ARCH"
batch_size = 50
TOML

# --- dry run: counts per shard and table, keys, destination; nothing changes -------------------
dump=$(catalog_dump)
expect_exit 0 shardctl archive run cold-customers --dry-run
expect_stdout_contains "would archive rows of public.customers where created_at < '2024-03-01', with every row that references them,"
expect_stdout_contains "public.order_lines"
expect_exit 0 shardctl archive run cold-customers --dry-run --format json
assert_eq "$(jq -r '[.shards[].rows["public.customers"]] | add' "$STDOUT")" "$cold_c"
assert_eq "$(jq -r '[.shards[].rows["public.orders"]] | add' "$STDOUT")" "$cold_o"
assert_eq "$(jq -r .dry_run "$STDOUT")" "true"
[ "$(jq -r '.shards[0].first_key[0]' "$STDOUT")" != null ] || fail "dry run shows no first key"
assert_eq "$(catalog_dump)" "$dump"
assert_eq "$(psql_arch -XAtc "select count(*) from pg_tables where tablename = 'customers'")" "0"

expect_exit 0 shardctl archive list --format json
assert_eq "$(jq -r '.jobs[0].job' "$STDOUT")" "cold-customers"
assert_eq "$(jq -r '.jobs[0].last_run' "$STDOUT")" "null"

# --- the run ------------------------------------------------------------------------------------
expect_exit 0 shardctl archive run cold-customers --format json
RUN=$(jq -r .id "$STDOUT")
assert_eq "$(jq -r .status "$STDOUT")" "done"
assert_eq "$(count_all customers)" "$((cust0 - cold_c))"
assert_eq "$(count_all orders)" "$((ord0 - cold_o))"
assert_eq "$(psql_arch -XAtc "select count(*) from public.customers")" "$cold_c"
assert_eq "$(psql_arch -XAtc "select count(*) from public.orders")" "$cold_o"
arch_lines=$(psql_arch -XAtc "select count(*) from public.order_lines")
assert_eq "$(count_all order_lines)" "$((lines0 - arch_lines))"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where created_at < '2024-03-01'")" "0"
# Every archived row is exactly the row that left, once, with its source shard.
assert_eq "$(psql_arch -XAtc "select md5(ROW(customer_id, name, region_id, created_at)::text) from public.customers" | sort | md5sum)" "$cold_rows_before"
assert_eq "$(psql_arch -XAtc "select count(*) from (select customer_id from public.customers group by 1 having count(*) > 1) d")" "0"
assert_eq "$(psql_arch -XAtc "select string_agg(distinct source_shard, ',' order by source_shard) from public.customers")" "shard_1,shard_2"
# No orphan left on the shards.
for n in 1 2; do
  assert_eq "$(psql_shard "$n" -XAtc "select count(*) from order_lines l where not exists (select 1 from orders o where (o.customer_id, o.order_id) = (l.customer_id, l.order_id))")" "0"
done

expect_exit 0 shardctl archive show "$RUN"
expect_stdout_contains "status:  done"
expect_stdout_contains "shard_1"
expect_exit 0 shardctl op show "$RUN" --format json
assert_eq "$(jq -r '.job' "$STDOUT")" "cold-customers"
assert_eq "$(jq -r '[.shards[].state] | unique | join(",")' "$STDOUT")" "done"
expect_exit 0 shardctl op list --format json
assert_eq "$(jq -r --arg id "$RUN" '.operations[] | select(.id == $id) | .kind' "$STDOUT")" "archive"
assert_eq "$(jq -r --arg id "$RUN" '.operations[] | select(.id == $id) | .rows_moved' "$STDOUT")" "$((cold_c + cold_o + arch_lines))"
expect_exit 0 shardctl archive list --format json
assert_eq "$(jq -r '.jobs[0].last_run.id' "$STDOUT")" "$RUN"
# A second run finds nothing more to archive.
expect_exit 0 shardctl archive run cold-customers --format json
assert_eq "$(jq -r .rows "$STDOUT")" "0"

# --- restore ----------------------------------------------------------------------------------
expect_exit 0 shardctl archive restore "$RUN" --where "created_at < '2024-02-01'" --dry-run --format json
assert_eq "$(psql_arch -XAtc "select count(*) from public.customers")" "$cold_c"
expect_exit 0 shardctl archive restore "$RUN" --where "created_at < '2024-02-01'"
part=$(psql_shard 1 -XAtc "select count(*) from customers where created_at < '2024-02-01'")
[ "$part" -gt 0 ] || fail "restore --where restored nothing to shard_1"
assert_eq "$(psql_arch -XAtc "select count(*) from public.customers where created_at < '2024-02-01'")" "0"
assert_eq "$(psql_arch -XAtc "select count(*) from public.orders o where not exists (select 1 from public.customers c where c.customer_id = o.customer_id)")" "0"
expect_exit 0 shardctl archive restore "$RUN"
assert_eq "$(count_all customers)" "$cust0"
assert_eq "$(count_all orders)" "$ord0"
assert_eq "$(count_all order_lines)" "$lines0"
assert_eq "$(psql_arch -XAtc "select count(*) from public.customers") $(psql_arch -XAtc "select count(*) from public.order_lines")" "0 0"
assert_eq "$(for n in 1 2; do psql_shard "$n" -XAtc "select md5(c::text) from customers c where created_at < '2024-03-01'"; done | sort | md5sum)" "$cold_rows_before"
# Restoring again changes nothing.
expect_exit 0 shardctl archive restore "$RUN"
assert_eq "$(count_all customers)" "$cust0"

# --- without --cascade: referenced root rows stay, reported ----------------------------------
expect_exit 0 shardctl archive run --table orders --where "ordered_at < '2024-02-01'" --to "dir:$TEST_TMP/arch" --format json
RUN2=$(jq -r .id "$STDOUT")
refused=$(jq -r '[.shards[].refused] | add' "$STDOUT")
[ "$refused" -gt 0 ] || fail "orders that still have lines were not reported as refused"
expect_stderr_contains "stayed because rows still reference them"
for n in 1 2; do
  assert_eq "$(psql_shard "$n" -XAtc "select count(*) from order_lines l where not exists (select 1 from orders o where (o.customer_id, o.order_id) = (l.customer_id, l.order_id))")" "0"
done
M="$TEST_TMP/arch/$RUN2/manifest.json"
[ -f "$M" ] || fail "no manifest"
# Every file loads with zstd and psql alone, and matches its manifest entry.
f1=$(jq -r '.files[0].path' "$M")
assert_eq "$(cd "$TEST_TMP/arch/$RUN2" && sha256sum "$f1" | cut -d' ' -f1)" "$(jq -r '.files[0].sha256' "$M")"
assert_eq "$(zstd -qdc "$TEST_TMP/arch/$RUN2/$f1" | wc -l)" "$(jq -r '.files[0].rows' "$M")"
# An edited manifest or a damaged file is found before anything is restored (65).
h=$(hash_all orders)
cp "$M" "$TEST_TMP/manifest.good"
jq '.files[0].rows += 1' "$TEST_TMP/manifest.good" > "$M"
expect_exit 65 shardctl archive restore "$RUN2"
expect_stderr_contains "its manifest says"
echo '{"format": "shardctl-archive/1", "files": 7}' > "$M"
expect_exit 65 shardctl archive restore "$RUN2"
cp "$TEST_TMP/manifest.good" "$M"
cp "$TEST_TMP/arch/$RUN2/$f1" "$TEST_TMP/file.good"
printf 'X' | dd of="$TEST_TMP/arch/$RUN2/$f1" bs=1 seek=20 conv=notrunc 2>/dev/null
expect_exit 65 shardctl archive restore "$RUN2"
assert_eq "$(hash_all orders)" "$h"
cp "$TEST_TMP/file.good" "$TEST_TMP/arch/$RUN2/$f1"
# Restored from the directory: every order is back.
expect_exit 0 shardctl archive restore "$RUN2"
assert_eq "$(count_all orders)" "$ord0"
assert_eq "$(jq -r '[.files[] | select(.restored | not)] | length' "$M")" "0"
expect_exit 0 shardctl archive restore "$RUN2"
assert_eq "$(count_all orders)" "$ord0"

# --- bad input: refused before anything changes ----------------------------------------------
h=$(hash_all orders)
dump=$(catalog_dump)
expect_exit 64 shardctl archive run --table orders --where "ordered_at <" --to "dir:$TEST_TMP/x"
expect_stderr_contains "not a valid condition"
expect_exit 64 shardctl archive run --table orders --where "no_such_column > 1" --to "dir:$TEST_TMP/x"
expect_stderr_contains "no_such_column"
expect_exit 64 shardctl archive run --table orders --where "order_id in (select order_id from order_lines)" --to "dir:$TEST_TMP/x"
expect_stderr_contains "a subquery is not allowed"
expect_exit 64 shardctl archive run --table orders --where "true); drop table orders; --" --to "dir:$TEST_TMP/x"
expect_exit 64 shardctl archive run --table no_such_table --where "true" --to "dir:$TEST_TMP/x"
expect_exit 64 shardctl archive run --table orders --where "true" --to "ftp:/x"
expect_exit 64 shardctl archive run --table orders --where "true" --to "postgres:host=x password=secret"
expect_stderr_not_secret() { ! grep -q secret "$STDERR" || fail "the password was printed"; }
expect_stderr_not_secret
expect_exit 64 shardctl archive run no-such-job
expect_exit 64 shardctl archive run cold-customers --table orders
expect_exit 64 shardctl archive run --table orders --where "true" --to "dir:$TEST_TMP/x" --max-runtime 5parsecs
expect_exit 69 shardctl archive run --table orders --where "true" --to "postgres:host=$SANDBOX_RUN port=1 dbname=nowhere"
psql_shard 1 -q -c "create table nopk (a int, b text)"
psql_shard 2 -q -c "create table nopk (a int, b text)"
expect_exit 64 shardctl archive run --table nopk --where "true" --to "dir:$TEST_TMP/x"
expect_stderr_contains "has no primary key"
# A destination table whose columns do not match.
psql_arch -q -c "drop table public.order_lines, public.orders; create table public.orders (customer_id bigint, order_id integer)"
expect_exit 64 shardctl archive run --table orders --where "true" --to "postgres:$ARCH" --cascade
expect_stderr_contains "the archive table public.orders"
assert_eq "$(hash_all orders)" "$h"
[ ! -e "$TEST_TMP/x" ] || [ -z "$(ls -A "$TEST_TMP/x")" ] || fail "a refused run wrote files"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.operations where kind = 'archive'")" "3"

# --- one run per job at a time (75), and the held job is named ---------------------------------
SHARDCTL_FAULT_PAUSE=archive-locked:1 "$SHARDCTL_BIN/shardctl" archive run --table orders --where "ordered_at < '2024-03-01'" \
  --to "dir:$TEST_TMP/arch" --name hold --parallel 1 >"$TEST_TMP/hold.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the held run" "$TEST_TMP/hold.out"
expect_exit 75 shardctl archive run --table orders --where "ordered_at < '2024-03-01'" --to "dir:$TEST_TMP/arch" --name hold
expect_stderr_contains "archive job hold is being run by another process"
HOLD=$(psql_catalog -XAtc "select op_id from shardctl.operations where args->>'job' = 'hold'")
expect_exit 75 shardctl op resume "$HOLD"
kill -CONT $pid
wait $pid || fail "the held run failed"
expect_exit 0 shardctl op show "$HOLD" --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
pass
