# shardctl query: one read-only statement on every shard, one result with a shard column
# (text, CSV, JSON), --map/--shards, --limit; a shard that fails (missing table, columns unlike
# the others', timeout, unreachable, a write refused by READ ONLY) is named on stderr, the
# others' rows still come, and the exit code is 3 (partial). It runs as the read role the
# fixture's `sandbox up` made (t_query_readonly: what that role and the statement check refuse).
source "$(dirname "$0")/lib.sh"

fresh_fleet query
printf '[query]\nuser = "shardctl_read"\n' > "$TEST_TMP/shardctl.toml"
n=$(fleet_shards)
[ "$n" = 4 ] || fail "expected a 4-shard fleet, got $n"

# 1. Counts per shard equal what psql counts on each shard; the sum too.
expect_exit 0 shardctl query "select count(*) as n, sum(order_id) as s from orders" --format csv
assert_eq "$(head -1 "$STDOUT")" "shard,n,s"
total=0
for i in 1 2 3 4; do
  want=$(psql_shard "$i" -XAtc "select 'shard_$i,' || count(*) || ',' || coalesce(sum(order_id), 0) from orders")
  grep -qx -- "$want" "$STDOUT" || fail "shard_$i: expected line $want in: $(cat "$STDOUT")"
  total=$((total + $(psql_shard "$i" -XAtc "select count(*) from orders")))
done
assert_eq "$(tail -n +2 "$STDOUT" | wc -l)" 4
assert_eq "$(tail -n +2 "$STDOUT" | awk -F, '{t += $2} END {print t}')" "$total"
[ "$total" -gt 0 ] || fail "the sample fleet has no orders"

# Text: a header with the shard column first, one aligned line per shard.
expect_exit 0 shardctl query "select count(*) as n from customers"
assert_eq "$(head -1 "$STDOUT" | awk '{print $1, $2}')" "shard n"
assert_eq "$(tail -n +2 "$STDOUT" | awk '{print $1}' | sort | tr '\n' ' ')" "shard_1 shard_2 shard_3 shard_4 "

# CSV rows are the shard's rows exactly (NULL unquoted, empty string ""): as COPY ... CSV.
sql="select customer_id, name, null::text as nothing, '' as empty from customers order by customer_id limit 50"
expect_exit 0 shardctl query "$sql" --format csv --shards shard_2
psql_shard 2 -XAtc "copy ($sql) to stdout (format csv)" | sed 's/^/shard_2,/' > "$TEST_TMP/want.csv"
tail -n +2 "$STDOUT" > "$TEST_TMP/got.csv"
cmp -s "$TEST_TMP/want.csv" "$TEST_TMP/got.csv" || fail "CSV differs from COPY CSV: $(diff "$TEST_TMP/want.csv" "$TEST_TMP/got.csv" | head -5)"

# 2. JSON: one document; columns with types, typed values, per-shard status.
expect_exit 0 shardctl query "select customer_id, name, true as flag from customers order by customer_id limit 2" --format json
assert_eq "$(jq -c '[.columns[].name]' "$STDOUT")" '["shard","customer_id","name","flag"]'
assert_eq "$(jq -r '.columns[1].type' "$STDOUT")" "bigint"
assert_eq "$(jq '.rows | length' "$STDOUT")" 8
assert_eq "$(jq -r '[.rows[] | (.[1] | type), (.[3] | type)] | unique | join(",")' "$STDOUT")" "boolean,number"
assert_eq "$(jq -r '[.shards[] | .status + ":" + (.rows | tostring)] | join(" ")' "$STDOUT")" "ok:2 ok:2 ok:2 ok:2"
assert_eq "$(jq -r .partial "$STDOUT")" "false"

# 3. Selection: --shards names them, --map takes the shards its mappings route to.
expect_exit 0 shardctl query "select 1 as one" --shards shard_1,shard_3 --format csv
assert_eq "$(tail -n +2 "$STDOUT" | sort | tr '\n' ' ')" "shard_1,1 shard_3,1 "
expect_exit 0 shardctl query "select 1 as one" --map customers --format json
assert_eq "$(jq -r '[.rows[][0]] | sort | join(",")' "$STDOUT")" "shard_1,shard_2,shard_3,shard_4"
expect_exit 64 shardctl query "select 1" --shards nosuch
expect_stderr_contains "unknown shard 'nosuch'"
expect_exit 64 shardctl query "select 1" --map nosuch

# 4. --limit N per shard: N rows from each, and the shards say they had more.
expect_exit 0 shardctl query "select customer_id from customers" --limit 3 --format json
assert_eq "$(jq '.rows | length' "$STDOUT")" 12
assert_eq "$(jq -r '[.shards[].limited] | unique | join(",")' "$STDOUT")" "true"
expect_exit 0 shardctl query "select customer_id from customers" --limit 3 --format csv
assert_eq "$(tail -n +2 "$STDOUT" | cut -d, -f1 | sort | uniq -c | awk '{print $1}' | sort -u)" "3"
expect_exit 0 shardctl query "select 1 as one" --limit 5 --format json
assert_eq "$(jq -r '[.shards[].limited] | unique | join(",")' "$STDOUT")" "false"

# 5. A query failing on one shard: a table that shard_2 lacks. The other three shards' rows
# come, stderr names shard_2 and the server's error, exit 3.
for i in 1 2 3 4; do psql_shard "$i" -qc "create table only_three (x int); insert into only_three values ($i)"; done
psql_shard 2 -qc "drop table only_three"
expect_exit 3 shardctl query "select x from only_three" --format csv
assert_eq "$(tail -n +2 "$STDOUT" | sort | tr '\n' ' ')" "shard_1,1 shard_3,3 shard_4,4 "
expect_stderr_contains "shard shard_2 failed"
expect_stderr_contains 'relation "only_three" does not exist'
expect_stderr_contains "partial result: 1 of 4 shard(s) failed: shard_2"
expect_exit 3 shardctl query "select x from only_three" --format json
assert_eq "$(jq -r '.partial, (.shards[] | select(.shard == "shard_2") | .status)' "$STDOUT" | tr '\n' ' ')" "true failed "
# The fix converges: the table is back, the query is whole again.
psql_shard 2 -qc "create table only_three (x int); insert into only_three values (2)"
expect_exit 0 shardctl query "select x from only_three" --format csv
assert_eq "$(tail -n +2 "$STDOUT" | wc -l)" 4

# Columns unlike the first shard's (a text column on shard_4) fail that shard.
psql_shard 4 -qc "alter table only_three alter column x type text"
expect_exit 3 shardctl query "select x from only_three" --parallel 1
expect_stderr_contains "shard shard_4 failed: its columns (x text) differ from those of shard shard_1 (x integer)"
assert_eq "$(tail -n +2 "$STDOUT" | wc -l)" 3

# 6. Writes are refused: as statements that are no read (64, before any shard runs them), and
# hidden in a function by READ ONLY on every shard, whatever the role.
before=$(psql_shard 1 -XAtc "select count(*) from customers")
expect_exit 64 shardctl query "delete from customers"
expect_stderr_contains "error: the statement begins with DELETE, not with SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN"
expect_exit 64 shardctl query "select 1; delete from customers"
expect_stderr_contains "cannot insert multiple commands into a prepared statement"
expect_exit 64 shardctl query "create table nope (x int)" --shards shard_1
psql_shard 1 -qc "create sequence qs"
: > "$TEST_TMP/admin.toml"
expect_exit 3 shardctl -c "$TEST_TMP/admin.toml" query --allow-privileged "select nextval('qs')" --shards shard_1
expect_stderr_contains "shard shard_1 failed: cannot execute nextval() in a read-only transaction"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers")" "$before"
assert_eq "$(psql_shard 1 -XAtc "select to_regclass('public.nope') is null and last_value = 1 and not is_called from qs")" "t"

# 7. --timeout: the statement runs too long on shard_3 only; that shard fails, the rest answer.
# It would sleep an hour there: only the statement timeout ends it (the server says so, and
# shardctl names its --timeout), well before the hang guard.
db3=$(psql_shard 3 -XAtc "select current_database()")
expect_exit_guarded 3 shardctl query "select pg_sleep(case when current_database() = '$db3' then 3600 else 0 end)::text as slept" \
  --timeout 500ms --format csv
expect_stderr_contains "shard shard_3 failed: canceling statement due to statement timeout (--timeout 500ms)"
assert_eq "$(tail -n +2 "$STDOUT" | cut -d, -f1 | sort | tr '\n' ' ')" "shard_1 shard_2 shard_4 "
expect_exit 64 shardctl query "select 1" --timeout soon

# 8. An unreachable shard: its failure is listed, the others answer, exit 3; offline, it is
# left out with a note and the result is whole.
mkdir -p "$TEST_TMP/nosock"
expect_exit 0 shardctl shard add ghost --dsn "host=$TEST_TMP/nosock port=1 dbname=ghost"
expect_exit 3 shardctl query "select 1 as one" --format csv --connect-timeout 2
assert_eq "$(tail -n +2 "$STDOUT" | wc -l)" 4
expect_stderr_contains "shard ghost unreachable: cannot connect to shard ghost"
expect_exit 3 shardctl query "select 1 as one" --format json
assert_eq "$(jq -r '.shards[] | select(.shard == "ghost") | .status' "$STDOUT")" "unreachable"
expect_exit 0 shardctl shard set ghost --status offline
expect_exit 0 shardctl query "select 1 as one" --format csv
expect_stderr_contains "shard ghost is offline: left out"

# 9. Streamed, not accumulated: rows arrive before the statement ends, and when the reader
# goes away (closed pipe) shardctl ends quietly and the statement stops on the shard. The
# statement would never end by itself (2^63 rows): rows that arrive prove streaming, and only
# the closed pipe can end it, well before the hang guard.
endless="select generate_series(1, 9223372036854775807) as g"
set +o pipefail
timeout -k 10 180 "$SHARDCTL_BIN/shardctl" query "$endless" --format csv --shards shard_1 2>"$STDERR" | head -3 > "$STDOUT"
rc=${PIPESTATUS[0]}
set -o pipefail
[ "$rc" != 124 ] && [ "$rc" != 137 ] || fail "closed pipe: the query still ran after 180 s, killed (a hang)"
[ "$rc" = 0 ] || fail "closed pipe: exit $rc, want 0: $(cat "$STDERR")"
[ "$(tr '\n' ' ' < "$STDOUT")" = "shard,g shard_1,1 shard_1,2 " ] || fail "closed pipe: the first rows are not these: $(cat "$STDOUT")"
[ ! -s "$STDERR" ] || fail "closed pipe: stderr not quiet: $(cat "$STDERR")"
wait_until "closed pipe: the endless statement to stop on shard_1" sql_true "$(shard_dsn 1)" \
  "select not exists (select from pg_stat_activity where query = '$endless' and pid <> pg_backend_pid())"

# The statement from stdin.
echo "select 2 as two" | shardctl query - --shards shard_4 --format csv > "$STDOUT"
assert_eq "$(tail -1 "$STDOUT")" "shard_4,2"
pass
