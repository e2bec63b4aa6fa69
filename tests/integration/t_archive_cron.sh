# Cron-friendly archive runs: --max-runtime stops cleanly after the batch that passes it (the
# run is paused, `op wait` says so, and the job's next run continues the same run to the end);
# -q is silent; --sleep throttles; `op cancel` ends a paused run, keeping what was archived;
# --max-lag with no replica behind does not wait; a job whose definition changed while a run
# of it is unfinished is refused (75) until that run is resumed or cancelled.
source "$(dirname "$0")/lib.sh"

fresh_fleet archcron --shards 2 --scale 1
before=$(fleet_fingerprint)
WHERE="created_at < '2024-04-01'"
cat > shardctl.toml <<TOML
catalog = "$SHARDCTL_CATALOG"
[[archive.job]]
name = "nightly"
table = "customers"
where = "$WHERE"
cascade = true
to = "dir:$TEST_TMP/arch"
batch_size = 5
sleep = "200ms"
TOML
cold=0; for n in 1 2; do cold=$((cold + $(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE"))); done

expect_exit 0 shardctl -q archive run nightly --max-runtime 1500ms --parallel 1
[ ! -s "$STDERR" ] || fail "-q printed: $(cat "$STDERR")"
RUN=$(psql_catalog -XAtc "select op_id from shardctl.operations where kind = 'archive'")
expect_exit 0 shardctl archive show "$RUN" --format json
assert_eq "$(jq -r .status "$STDOUT")" "paused"
first=$(jq -r .rows "$STDOUT")
[ "$first" -gt 0 ] || fail "the first slot archived nothing"
[ "$(jq -r '[.shards[].rows["public.customers"] // 0] | add' "$STDOUT")" -lt "$cold" ] || fail "--max-runtime did not stop the run"
expect_exit 69 shardctl op wait "$RUN"
expect_stderr_contains "paused"
expect_exit 0 shardctl op list --format json
assert_eq "$(jq -r --arg id "$RUN" '.operations[] | select(.id == $id) | .status' "$STDOUT")" "paused"

# A changed definition may not take over the unfinished run.
expect_exit 75 shardctl archive run --table customers --where "true" --to "dir:$TEST_TMP/arch" --name nightly
expect_stderr_contains "unfinished run $RUN"

# The next slot continues the same run (no new operation).
expect_exit 0 shardctl archive run nightly --max-runtime 400ms --parallel 2 --format json
assert_eq "$(jq -r .id "$STDOUT")" "$RUN"
expect_exit 0 shardctl archive run nightly --max-lag 30s --format json
assert_eq "$(jq -r .id "$STDOUT")" "$RUN"
assert_eq "$(jq -r .status "$STDOUT")" "done"
assert_eq "$(jq -r '[.shards[].rows["public.customers"]] | add' "$STDOUT")" "$cold"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.operations where kind = 'archive'")" "1"
expect_exit 0 shardctl archive restore "$RUN"
assert_eq "$(fleet_fingerprint)" "$before"

# op cancel of a paused run: it ends, what was archived stays archived, nothing is lost.
expect_exit 0 shardctl archive run nightly --max-runtime 200ms --parallel 1
RUN2=$(psql_catalog -XAtc "select op_id from shardctl.operations where kind = 'archive' and op_id <> '$RUN'")
expect_exit 0 shardctl op cancel "$RUN2" --format json
assert_eq "$(jq -r .status "$STDOUT")" "cancelled"
expect_exit 0 shardctl archive restore "$RUN2"
assert_eq "$(fleet_fingerprint)" "$before"
expect_exit 0 shardctl archive list --format json
assert_eq "$(jq -r '.jobs[0].last_run.status' "$STDOUT")" "cancelled"
pass
