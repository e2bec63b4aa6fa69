# A shard that cannot be reached: apply exits 69 within the connect timeout, the other shards
# are applied (an unreachable shard does not stop the rollout); status exits 3; once the shard
# is back (here: its DSN fixed) a re-run catches it up and status is 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_down 4
M="$TEST_TMP/migrations"
mig "$M" V1__t.sql <<'SQL'
create table t (id int primary key);
SQL
mig "$M" V2__u.sql <<'SQL'
alter table t add column u int;
SQL
# Nothing listens on this socket directory; the shard sorts first.
mkdir -p "$TEST_TMP/nosock"
expect_exit 0 shardctl shard add a_down --dsn "host=$TEST_TMP/nosock port=1 dbname=x"

t0=$(date +%s%N)
expect_exit 69 shardctl schema apply "$M" --parallel 1 --connect-timeout 2 --format json --junit "$TEST_TMP/apply.xml"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 10000 ] || fail "took $ms ms"
assert_eq "$(json_state a_down)" unreachable
assert_eq "$(jq -r '[.shards[] | select(.shard != "a_down") | .state] | unique | join(",")' "$STDOUT")" ok
assert_eq "$(jq -r '[.shards[] | select(.shard != "a_down") | .version] | unique | join(",")' "$STDOUT")" 2
expect_stderr_contains "shardctl schema: error: shard a_down (unreachable): "
grep -q 'classname="shardctl.schema.apply.a_down" name="connect"' "$TEST_TMP/apply.xml" || fail "no connect case in the junit report"
expect_exit 69 shardctl schema apply "$M" --dry-run --connect-timeout 1
expect_stdout_contains "unreachable"

expect_exit 3 shardctl schema status "$M" --connect-timeout 1 --format json
assert_eq "$(json_state a_down)" unreachable
assert_eq "$(json_state "$(shard_name 1)")" current
expect_exit 3 shardctl schema status --connect-timeout 1
# A recorded failure is more severe than an unreachable shard (2 before 3).
psql_shard 1 -qc "insert into shardctl.schema_history (version, name, kind, checksum, success) values ('3', 'V3__x.sql', 'versioned', 'sha256:00', false)"
expect_exit 2 shardctl schema status "$M" --connect-timeout 1
psql_shard 1 -qc "delete from shardctl.schema_history where name = 'V3__x.sql'"

# The shard comes back (a new database where its DSN now points): the next run catches it up.
psql -X -q -v ON_ERROR_STOP=1 "$(shard_dsn 1 | sed 's/dbname=[^ ]*/dbname=postgres/')" -c "create database schema_back_$$"
psql_catalog -qc "update shardctl.shards set dsn = '$(shard_dsn 1 | sed "s/dbname=[^ ]*/dbname=schema_back_$$/")' where name = 'a_down'"
expect_exit 0 shardctl schema apply "$M" --format json
assert_eq "$(jq -r '.shards[] | select(.applied | length > 0) | .shard' "$STDOUT")" a_down
expect_exit 0 shardctl schema status "$M"

step "a shard that answers but whose history cannot be read"
# Not unreachable: the hint must not promise that the next apply catches it up.
psql_shard 2 -qc "alter table shardctl.schema_history rename column checksum to checksum_gone"
expect_exit 69 shardctl schema apply "$M" --format json
assert_eq "$(json_state "$(shard_name 2)")" unreachable
assert_eq "$(jq -r --arg s "$(shard_name 2)" '.shards[] | select(.shard == $s) | .hint' "$STDOUT")" \
  "nothing ran there: its shardctl.schema_history could not be read; repair it, then apply again"
expect_stderr_contains "checksum"
expect_exit 3 shardctl schema status "$M"
psql_shard 2 -qc "alter table shardctl.schema_history rename column checksum_gone to checksum"
expect_exit 0 shardctl schema status "$M"
pass
