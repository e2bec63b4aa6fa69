# Shard, map, mapping, table and xref CRUD through the binary, text and JSON.
source "$(dirname "$0")/lib.sh"

fresh_fleet crud --empty

expect_exit 0 shardctl shard add s1 --dsn "host=/tmp dbname=one"
expect_stdout_contains "added shard s1"
expect_exit 0 shardctl shard add s2 --dsn "postgresql://app@db2:5433/two" --status readonly --format json
assert_eq "$(jq -r .status "$STDOUT")" "readonly"
assert_eq "$(jq -r .dsn "$STDOUT")" "user=app dbname=two host=db2 port=5433"
expect_exit 64 shardctl shard add s1 --dsn "dbname=again"
expect_stderr_contains "shard s1 already exists"
expect_exit 0 shardctl shard list --format json
assert_eq "$(jq -r '.shards | map(.name) | join(",")' "$STDOUT")" "s1,s2"
expect_exit 0 shardctl shard set s2 --status online
expect_exit 0 shardctl shard show s2 --format json
assert_eq "$(jq -r .status "$STDOUT")" "online"
expect_exit 64 shardctl shard set s2 --status sleeping

# Maps and mappings.
expect_exit 0 shardctl map create cust --kind range --key-type bigint
expect_exit 0 shardctl mapping add --map cust --range ..100 --shard s1
expect_exit 0 shardctl mapping add --map cust --range 100..200 --shard s2
expect_exit 0 shardctl mapping add --map cust --range 200.. --shard s1 --format json
assert_eq "$(jq -r .range "$STDOUT")" "200.."
assert_eq "$(jq -r .high "$STDOUT")" "null"
expect_exit 0 shardctl mapping list --map cust --format json
assert_eq "$(jq -r '.mappings | map(.range + ">" + .shard) | join(" ")' "$STDOUT")" "..100>s1 100..200>s2 200..>s1"
expect_exit 0 shardctl map show cust
expect_stdout_contains "100..200"
expect_exit 0 shardctl map list --format json
assert_eq "$(jq -r '.maps[0].mappings' "$STDOUT")" "3"

expect_exit 0 shardctl map create tenants --kind list --key-type text
expect_exit 0 shardctl mapping add --map tenants --point acme --shard s1
expect_exit 0 shardctl mapping add --map tenants --point "two words" --shard s2
expect_exit 64 shardctl mapping add --map tenants --point acme --shard s2
expect_stderr_contains "overlaps mapping acme -> s1"
expect_exit 64 shardctl mapping add --map tenants --range a..b --shard s2
expect_stderr_contains "list map"

expect_exit 0 shardctl map create h --kind hash --key-type uuid --shards s1,s2,s1 --format json
assert_eq "$(jq -r '.mappings | length' "$STDOUT")" "3"

# Tables and xrefs.
expect_exit 0 shardctl table add-reference region
expect_exit 0 shardctl table add-sharded orders --map cust --key customer_id
expect_exit 0 shardctl table add-sharded public.order_lines --map cust --key customer_id
expect_exit 64 shardctl table add-sharded orders --map cust --key customer_id
expect_exit 0 shardctl table list --format json
assert_eq "$(jq -r '.tables | map(.name + ":" + .kind) | join(" ")' "$STDOUT")" \
  "public.order_lines:sharded public.orders:sharded public.region:reference"
expect_exit 0 shardctl xref add lines_order --child "order_lines(customer_id, order_id)" \
  --parent "orders(customer_id, order_id)" --route customer_id --map cust
expect_exit 0 shardctl xref list --format json
assert_eq "$(jq -r '.xrefs[0].child_columns | join(",")' "$STDOUT")" "customer_id,order_id"
expect_exit 64 shardctl xref add bad --child "order_lines(a, b)" --parent "orders(a)" --route a --map cust
expect_stderr_contains "pair up"
expect_exit 64 shardctl xref add bad2 --child "nowhere(a)" --parent "orders(a)" --route a --map cust
expect_stderr_contains "not declared"
expect_exit 64 shardctl table remove orders
expect_stderr_contains "lines_order"

# Removing things others depend on is refused, and --force never touches shard data.
expect_exit 64 shardctl shard remove s2
expect_stderr_contains "still holds"
expect_exit 64 shardctl map drop cust
expect_stderr_contains "still used by"
expect_exit 0 shardctl mapping remove --map cust --range 100..200
expect_exit 64 shardctl mapping remove --map cust --range 100..150
expect_stderr_contains "no mapping 100..150"
expect_exit 0 shardctl mapping remove --map tenants --point acme
expect_exit 0 shardctl xref remove lines_order
expect_exit 0 shardctl table remove orders
expect_exit 0 shardctl map drop cust --force --yes
expect_exit 64 shardctl map show cust
expect_stderr_contains "unknown map 'cust'"
assert_eq "$(psql_catalog -tAc "select count(*) from shardctl.tables where name = 'public.order_lines'")" "0"
expect_exit 0 shardctl shard remove s2 --force --yes
expect_exit 64 shardctl shard show s2

# --dry-run changes nothing.
before=$(catalog_dump)
expect_exit 0 shardctl --dry-run shard add s9 --dsn "dbname=nine"
expect_stdout_contains "would add shard s9"
expect_exit 0 shardctl map create dry --kind range --key-type int --dry-run
expect_exit 0 shardctl mapping add --map tenants --point zz --shard s1 --dry-run
expect_exit 0 shardctl map drop tenants --force --dry-run
assert_eq "$(catalog_dump)" "$before"
pass
