# Real SIGKILLs at random times during archive runs, to both destinations: `op resume` always
# finishes the run with every cold row archived exactly once, and `archive restore` brings the
# fleet back to exactly its original rows.
source "$(dirname "$0")/lib.sh"
WHERE="created_at < '2024-02-15'"

fresh_fleet archkill_ref --shards 2
before=$(fleet_fingerprint)
RANDOM=20261123  # reproducible delays
killed_midway=0
for run in $(seq 1 6); do
  fresh_fleet archkill --shards 2
  if [ $((run % 2)) = 0 ]; then
    _unique archkill
    psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$UNIQUE_NAME\"" >/dev/null
    ARCH="$CATALOG_CLUSTER dbname=$UNIQUE_NAME"
    DEST="postgres:$ARCH"
  else
    _unique archkilldir
    DEST="dir:$TEST_TMP/$UNIQUE_NAME"
  fi
  cold=0
  for n in 1 2; do cold=$((cold + $(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE"))); done
  delay_ms=$((RANDOM % 600))
  "$SHARDCTL_BIN/shardctl" archive run --table customers --where "$WHERE" --cascade --to "$DEST" --batch-size 4 --sleep 40ms \
    >"$TEST_TMP/run.out" 2>&1 &
  pid=$!
  # The kill lands a random time after the first batch was journaled (however slow the build).
  for _ in $(seq 1 200); do
    [ "$(psql_catalog -XAtc "select count(*) from shardctl.archive_batches")" != 0 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  sleep "$(printf "0.%03d" "$delay_ms")"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  RUN=$(psql_catalog -XAtc "select op_id from shardctl.operations where kind = 'archive'")
  if [ -z "$RUN" ]; then
    # Killed before the run was journaled: nothing may have changed.
    [ "$(fleet_fingerprint)" = "$before" ] || fail "run $run (killed after ${delay_ms} ms, no journal): rows changed"
    continue
  fi
  expect_exit 0 shardctl archive show "$RUN" --format json
  echo "run $run: killed after ${delay_ms} ms: $(jq -r '.status + ", " + (.rows | tostring) + " rows archived"' "$STDOUT")"
  [ "$(jq -r .status "$STDOUT")" != done ] && killed_midway=$((killed_midway + 1))
  expect_exit 0 shardctl op resume "$RUN"
  expect_exit 0 shardctl archive show "$RUN" --format json
  assert_eq "$(jq -r .status "$STDOUT")" "done"
  archived=$(jq -r '[.shards[].rows["public.customers"]] | add' "$STDOUT")
  assert_eq "$archived" "$cold"
  for n in 1 2; do assert_eq "$(psql_shard "$n" -XAtc "select count(*) from customers where $WHERE")" "0"; done
  if [ "${DEST%%:*}" = postgres ]; then
    assert_eq "$(psql -X -At "$ARCH" -c "select count(*) || ' ' || count(distinct customer_id) from public.customers")" "$cold $cold"
  fi
  expect_exit 0 shardctl archive restore "$RUN"
  after=$(fleet_fingerprint)
  [ "$after" = "$before" ] || fail "run $run (killed after ${delay_ms} ms): rows changed after archive + restore
before: $before
after:  $after"
done
[ "$killed_midway" -ge 3 ] || fail "only $killed_midway of 6 runs were killed in the middle"
pass
