# check --orphans: within-shard and cross-shard orphans injected with plain SQL are found with
# exact counts and keys, whatever the probe batch size or parallelism; output formats; the
# [check] thresholds; a malformed [check] table.
source "$(dirname "$0")/lib.sh"

fresh_fleet check_orphans --shards 3 --scale 1
# customers ..334 on shard_1, 334..667 on shard_2, 667.. on shard_3

# A clean fleet: exit 0, no finding, in every format.
expect_exit 0 shardctl check --format json
assert_eq "$(jq -r '.status + " " + (.findings | length | tostring)' "$STDOUT")" "ok 0"
expect_exit 0 shardctl check --format nagios
assert_eq "$(wc -l < "$STDOUT")" "1"
expect_stdout_contains "SHARDCTL OK - no findings on 3 shards | orphans=0 strays=0 "
expect_exit 0 shardctl check
expect_stdout_contains "status: OK"

# Within shard_1: order (5,1) deleted under its lines (FK checks off for that session).
lines_5_1=$(psql_shard 1 -XAtc "select count(*) from order_lines where customer_id = 5 and order_id = 1")
[ "$lines_5_1" -gt 0 ] || fail "sample data has no lines for order (5,1)"
psql_shard 1 -qc "set session_replication_role = replica; delete from orders where customer_id = 5 and order_id = 1"
# Across shards: lines on shard_1 for customer 700 (routed to shard_3); order (700,1) is then
# deleted on shard_3, which orphans shard_3's own lines of it too. (700,2) still exists.
psql_shard 1 -qc "set session_replication_role = replica;
  insert into order_lines values (700, 1, 100, 1, 1, 1.00), (700, 2, 100, 1, 1, 1.00)"
lines_700_1=$(psql_shard 3 -XAtc "select count(*) from order_lines where customer_id = 700 and order_id = 1")
psql_shard 3 -qc "set session_replication_role = replica; delete from orders where customer_id = 700 and order_id = 1"

summary() { jq -c '[.findings[] | select(.kind == "orphans") | [.shard, .table, .object, .count, .samples]]' "$STDOUT"; }
want="[[\"shard_1\",\"public.order_lines\",\"order_lines_order\",$((lines_5_1 + 1)),[\"5,1\",\"700,1\"]],[\"shard_3\",\"public.order_lines\",\"order_lines_order\",$lines_700_1,[\"700,1\"]]]"

expect_exit 2 shardctl check --orphans --format json
assert_eq "$(summary)" "$want"
assert_eq "$(jq -r '.status' "$STDOUT")" "critical"
assert_eq "$(jq -r '[.findings[] | select(.shard == "shard_1")][0].detail' "$STDOUT")" \
  "$lines_5_1 within the shard, 1 across shards, 0 routed to no shard"
assert_eq "$(jq -r '.summary.orphans' "$STDOUT")" "$((lines_5_1 + 1 + lines_700_1))"
assert_eq "$(jq -r '.checks | join(",")' "$STDOUT")" "orphans,missing_table"

# Same answer probing one key per round trip, and sweeping one shard at a time.
expect_exit 2 shardctl check --orphans --format json --batch-size 1 --parallel 1
assert_eq "$(summary)" "$want"
expect_exit 2 shardctl check --orphans --format json --sample 1
assert_eq "$(jq -c '[.findings[] | .samples]' "$STDOUT")" '[["5,1"],["700,1"]]'

# The stray line (700,2,100) on shard_1 is not an orphan: its order exists on shard_3. It is
# a stray, which the full check reports too.
expect_exit 2 shardctl check --format json
assert_eq "$(jq -c '[.findings[] | select(.kind == "strays") | [.shard, .table, .count, .samples]]' "$STDOUT")" \
  '[["shard_1","public.order_lines",2,["700,1,100","700,2,100"]]]'

total=$((lines_5_1 + 1 + lines_700_1))
expect_exit 2 shardctl check --orphans --format nagios
assert_eq "$(cat "$STDOUT")" "SHARDCTL CRITICAL - $total orphaned order_lines on 2 shards | orphans=$total strays=0 overlapping_mappings=0 unmapped_keys=0 mapping_unknown_shard=0 mapping_offline_shard=0 mapping_readonly_shard=0 offline_mapping=0 leftover_guard=0 expired_lease=0 missing_table=0 leftover_slot=0 leftover_replication=0 reference_differs=0 reference_tie=0 reference_drift=0 unreachable_shards=0"

expect_exit 2 shardctl check --orphans
expect_stdout_contains "status: CRITICAL (2 critical, 0 warning finding(s); 3 shard(s) checked, 0 unreachable)"
expect_stdout_contains "order_lines_order"

# Prometheus textfile: written atomically (no temporary left), a gauge per kind and shard.
prom="$TEST_TMP/shardctl.prom"
before_run=$(date +%s)
expect_exit 2 shardctl check --orphans --prometheus "$prom" --format json
[ -f "$prom" ] || fail "no prometheus file"
[ -z "$(ls "$TEST_TMP" | grep 'shardctl.prom.tmp' || true)" ] || fail "temporary prometheus file left behind"
grep -qxF "shardctl_check_findings{kind=\"orphans\",shard=\"shard_1\"} $((lines_5_1 + 1))" "$prom" || { cat "$prom"; fail "shard_1 gauge"; }
grep -qxF "shardctl_check_findings{kind=\"orphans\",shard=\"shard_2\"} 0" "$prom" || fail "shard_2 gauge"
grep -qxF "shardctl_check_findings{kind=\"orphans\",shard=\"shard_3\"} $lines_700_1" "$prom" || fail "shard_3 gauge"
grep -qxF "shardctl_check_shard_up{shard=\"shard_2\"} 1" "$prom" || fail "shard_up"
grep -qxF "shardctl_check_status 2" "$prom" || fail "status gauge"
grep -qxF "# TYPE shardctl_check_last_run_timestamp_seconds gauge" "$prom" || fail "timestamp type"
ts=$(awk '/^shardctl_check_last_run_timestamp_seconds/ {printf "%d", $2}' "$prom")
[ "$ts" -ge "$before_run" ] && [ "$ts" -le "$(date +%s)" ] || fail "timestamp $ts not of this run"
grep -q 'kind="strays"' "$prom" && fail "strays were not checked, yet exported"

# [check] thresholds: orphans as warnings -> exit 1; escalated back at a row count.
printf '[check]\nwarning = ["orphans"]\n' > "$TEST_TMP/warn.toml"
expect_exit 1 shardctl check --orphans -c "$TEST_TMP/warn.toml" --format json
assert_eq "$(jq -r '"\([.findings[].severity] | unique | join(",")) \(.status)"' "$STDOUT")" "warning warning"
printf '[check]\nwarning = ["orphans"]\norphans_critical_at = %d\n' "$lines_700_1" > "$TEST_TMP/esc.toml"
expect_exit 2 shardctl check --orphans -c "$TEST_TMP/esc.toml" --format json
printf '[check]\nignore = ["orphans"]\n' > "$TEST_TMP/ignore.toml"
expect_exit 0 shardctl check --orphans -c "$TEST_TMP/ignore.toml"

# A malformed [check] table stops the command with 65 and file:line:col.
printf '[check]\nwarning = ["orphans", "orphanz"]\n' > "$TEST_TMP/bad1.toml"
expect_exit 65 shardctl check -c "$TEST_TMP/bad1.toml"
expect_stderr_contains "bad1.toml:2:23: \"check.warning\" names an unknown finding kind \"orphanz\""
printf '[check]\nsampel = 3\n' > "$TEST_TMP/bad2.toml"
expect_exit 65 shardctl check -c "$TEST_TMP/bad2.toml"
expect_stderr_contains "bad2.toml:2:1: unknown key \"check.sampel\""
expect_stderr_contains "did you mean \"sample\"?"
printf '[check]\nwarning = ["orphans"]\ncritical = ["orphans"]\n' > "$TEST_TMP/bad3.toml"
expect_exit 65 shardctl check -c "$TEST_TMP/bad3.toml"
expect_stderr_contains "bad3.toml:3:13: finding kind \"orphans\" is in both check.warning and check.critical"
printf '[check]\norphans_critical_at = "many"\n' > "$TEST_TMP/bad4.toml"
expect_exit 65 shardctl check -c "$TEST_TMP/bad4.toml"
expect_stderr_contains "bad4.toml:2:23:"

# --format nagios is check's own: other families still refuse it.
expect_exit 64 shardctl shard list --format nagios
expect_exit 64 shardctl check --fix nosuch
pass
