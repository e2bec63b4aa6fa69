# A migration fails on one shard of four (a conflicting object there): exit 2, the failure is in
# that shard's history, the shards before it are at the new version, later ones are not started
# (or are, with --continue-on-error); status exits 2; after the fix a re-run converges. --canary
# stops the rollout at a failing canary shard.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_fail 4
s1=$(shard_name 1) s2=$(shard_name 2) s3=$(shard_name 3) s4=$(shard_name 4)
M="$TEST_TMP/migrations"
mig "$M" V1__base.sql <<'SQL'
create table accounts (id int primary key);
SQL
mig "$M" V2__audit.sql <<'SQL'
create table audit (id int primary key, at timestamptz default now());
create index audit_at on audit (at);
SQL
mig "$M" V3__later.sql <<'SQL'
alter table accounts add column name text;
SQL
# Someone created `audit` by hand on shard 3.
psql_shard 3 -qc "create table audit (x text)"

# One shard at a time, so the stop is deterministic: 1 and 2 done, 3 fails, 4 never starts.
expect_exit 2 shardctl schema apply "$M" --parallel 1 --format json --junit "$TEST_TMP/apply.xml"
assert_eq "$(json_state "$s1")/$(json_state "$s2")/$(json_state "$s3")/$(json_state "$s4")" "ok/ok/failed/skipped"
assert_eq "$(jq -r --arg s "$s3" '.shards[] | select(.shard == $s) | .version' "$STDOUT")" 1
assert_eq "$(jq -r --arg s "$s3" '.shards[] | select(.shard == $s) | .error' "$STDOUT")" 'V2__audit.sql: relation "audit" already exists'
assert_eq "$(jq -r --arg s "$s4" '.shards[] | select(.shard == $s) | .planned | join(",")' "$STDOUT")" "V1__base.sql,V2__audit.sql,V3__later.sql"
expect_stderr_contains "shardctl schema: error: shard $s3 (failed): V2__audit.sql: relation \"audit\" already exists"
assert_eq "$(jq -r .exit_code "$STDOUT")" 2
assert_eq "$(history 1 | tr '\n' ' ')" "V1__base.sql|t V2__audit.sql|t V3__later.sql|t "
assert_eq "$(history 3 | tr '\n' ' ')" "V1__base.sql|t V2__audit.sql|f "
assert_eq "$(history 4)" ""
# The failed file's transaction was rolled back: its index does not exist on shard 3.
assert_eq "$(shard_value 3 "select to_regclass('audit_at') is null")" t
grep -q "<failure message=\"V2__audit.sql: relation &quot;audit&quot; already exists\"" "$TEST_TMP/apply.xml" || fail "junit failure missing"
assert_eq "$(grep -c '<skipped/>' "$TEST_TMP/apply.xml")" 4  # V3 on shard 3, all three on shard 4
expect_exit 2 shardctl schema status "$M" --format json
assert_eq "$(json_state "$s3")" failed
assert_eq "$(json_state "$s4")" pending
assert_eq "$(jq -r --arg s "$s3" '.shards[] | select(.shard == $s) | .migrations["V2__audit.sql"]' "$STDOUT")" failed
expect_exit 2 shardctl schema status

# --continue-on-error: shard 3 fails again (one more failed row), shard 4 is applied.
expect_exit 2 shardctl schema apply "$M" --parallel 1 --continue-on-error --format json
assert_eq "$(json_state "$s3")/$(json_state "$s4")" "failed/ok"
assert_eq "$(jq -r --arg s "$s1" '.shards[] | select(.shard == $s) | .applied | length' "$STDOUT")" 0
assert_eq "$(history 3 | tr '\n' ' ')" "V1__base.sql|t V2__audit.sql|f V2__audit.sql|f "

# Fix the cause, re-run: converges; status 0 (the failed rows stay as history, closed).
psql_shard 3 -qc "drop table audit"
expect_exit 0 shardctl schema apply "$M"
expect_stdout_contains "4 shard(s): 4 ok"
assert_eq "$(history 3 | tr '\n' ' ')" "V1__base.sql|t V2__audit.sql|f V2__audit.sql|f V2__audit.sql|t V3__later.sql|t "
expect_exit 0 shardctl schema status "$M"
expect_exit 0 shardctl schema status

# --canary 1 with the first shard failing: nothing starts after it, even with --parallel 4.
mig "$M" V4__flag.sql <<'SQL'
alter table accounts add column flag boolean;
SQL
psql_shard 1 -qc "alter table accounts add column flag int"
expect_exit 2 shardctl schema apply "$M" --canary 1 --parallel 4 --format json
assert_eq "$(jq -r .canary_failed "$STDOUT")" true
assert_eq "$(json_state "$s1")/$(json_state "$s2")/$(json_state "$s3")/$(json_state "$s4")" "failed/skipped/skipped/skipped"
assert_eq "$(shard_value 2 "select count(*) from shardctl.schema_history where name = 'V4__flag.sql'")" 0
expect_exit 2 shardctl schema apply "$M" --canary 1
expect_stdout_contains "the canary wave failed"
psql_shard 1 -qc "alter table accounts drop column flag"
# A good canary lets the rest go.
expect_exit 0 shardctl schema apply "$M" --canary 2 --parallel 4 --format json
assert_eq "$(jq -r .canary "$STDOUT")/$(jq -r '[.shards[].version] | unique | join(",")' "$STDOUT")" "2/4"
expect_exit 0 shardctl schema status "$M"
pass
