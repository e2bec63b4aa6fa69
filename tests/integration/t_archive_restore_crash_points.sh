# Crash safety of `archive restore` (shardctl-archive(1), RESTORE: "a restore that was interrupted
# is finished by running it again"), proven at every step boundary, for both kinds of archive.
# Customers with their orders and lines (--cascade) are archived from two shards in batches of 40,
# then a split moves the lower half of shard_1's first batch of keys to shard_2, so that batch
# restores onto two shards (one commit each) and the others onto one. What it proves:
#  - one uninterrupted restore reaches exactly the boundaries named for it, no other and none
#    twice (lib/archive/restore.cpp; archive_points.inc): for each archived batch SHARD/bN,
#    restore-commit@SHARD/bN/TARGET before it commits on each shard its keys route to now (by
#    `shardctl lookup`), restore-committed@SHARD/bN once all have, restore-removed@SHARD/bN once
#    the archive let the batch go; no re-run reaches a boundary not named;
#  - in chains, as archive_crash.inc: a fresh fleet's restore is killed (_exit 99) at the first
#    boundary not killed yet, the re-run (the documented remedy) at the first one left that it
#    reaches, and so on until a re-run finishes; every named boundary (with CRASH_SLICE=i/n,
#    those of its slice) is killed once;
#  - after each kill: no restore is journaled as done, and the killed batch is in the archive
#    until every target shard committed it (killed at restore-committed: still there; at
#    restore-removed: gone);
#  - at the end of every chain: every row of the fleet is back exactly once, unchanged, on the
#    shard its key routes to now; the archive holds nothing of the run (postgres: its tables are
#    empty; dir: every file of the manifest is marked restored and still there, as it was
#    written); one restore is journaled as done.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/archive_points.inc"
WHERE="created_at < '2024-02-15'"
TABLES=(customers orders order_lines)

# A fleet whose cold rows are archived to a new destination of ARCH_KIND, and then split: sets
# before (the fleet's rows before the run), DEST, ARCH_DSN (postgres), RUN.
archived_fleet() {
  fresh_fleet "$1" --shards 2
  before=$(fleet_fingerprint)
  archive_destination "$ARCH_KIND" archrestore
  psql_shard 1 -XAtc "select customer_id from customers c where c.$WHERE order by customer_id" > "$TEST_TMP/cold.1"
  psql_shard 2 -XAtc "select customer_id from customers c where c.$WHERE order by customer_id" > "$TEST_TMP/cold.2"
  expect_exit 0 shardctl archive run --table customers --where "$WHERE" --cascade --batch-size 40 --parallel 1 --to "$DEST" --format json
  RUN=$(jq -r .id "$STDOUT")
  # The keys below the 21st cold key of shard_1 (its first batch's lower half) leave shard_1.
  at=$(sed -n 21p "$TEST_TMP/cold.1")
  [ -n "$at" ] || fail "fewer than 21 cold customers on shard_1"
  expect_exit 0 shardctl split --map customers --at "$at" --to "$(shard_name 2)" --move lower --batch-size 500
}

# The archive's rows of batch BATCH of shard SHARD (postgres), or its files not marked restored (dir).
unit_archived() {
  if [ "$ARCH_KIND" = pg ]; then
    local at
    at=$(psql_catalog -XAtc "select b.archived_at from shardctl.archive_batches b join shardctl.shards s using (shard_id)
                             where b.op_id = '$RUN' and s.name = '$1' and b.batch_no = $2")
    [ -n "$at" ] || fail "no batch $2 of $1 journaled for run $RUN"
    psql -X -At "$ARCH_DSN" -c "select (select count(*) from public.customers where source_shard = '$1' and archived_at = '$at')
                                     + (select count(*) from public.orders where source_shard = '$1' and archived_at = '$at')
                                     + (select count(*) from public.order_lines where source_shard = '$1' and archived_at = '$at')"
  else
    jq --arg s "$1" --argjson b "$2" '[.files[] | select(.shard == $s and .batch == $b and (.restored | not))] | length' \
      "${DEST#dir:}/$RUN/manifest.json"
  fi
}

# The end state of a finished restore.
check_restored() {
  local after t
  after=$(fleet_fingerprint)
  [ "$after" = "$before" ] || fail "rows changed after archive, split and restore
before: $before
after:  $after"
  assert_fleet_consistent
  if [ "$ARCH_KIND" = pg ]; then
    for t in "${TABLES[@]}"; do
      assert_eq "$(psql -X -At "$ARCH_DSN" -c "select count(*) from public.$t")" 0
    done
  else
    local dir=${DEST#dir:}/$RUN
    assert_eq "$(jq '[.files[] | select(.restored | not)] | length' "$dir/manifest.json")" 0
    jq -r '.files[] | .sha256 + "  " + .path' "$dir/manifest.json" > "$TEST_TMP/sums"
    [ -s "$TEST_TMP/sums" ] || fail "the manifest lists no file"
    (cd "$dir" && sha256sum --quiet -c "$TEST_TMP/sums") >&2 || fail "a restored file is gone or changed: $dir"
  fi
  assert_eq "$(psql_catalog -XAtc "select count(*) || ' ' || string_agg(status, ',') from shardctl.operations
                                   where kind = 'archive-restore'")" "1 done"
}

for ARCH_KIND in pg dir; do
  step "$ARCH_KIND: the uninterrupted restore"
  archived_fleet "restref_$ARCH_KIND"
  # The boundaries by name: every archived batch (the journal's), each shard its keys route to now.
  required=()
  while read -r shard batch; do
    n=${shard#shard_}
    # This batch's customers, as the run took them: the shard's cold keys, 40 a batch in key order.
    sed -n "$(((batch - 1) * 40 + 1)),$((batch * 40))p" "$TEST_TMP/cold.$n" > "$TEST_TMP/unit.keys"
    [ -s "$TEST_TMP/unit.keys" ] || fail "batch $batch of $shard holds no cold customer"
    for target in $(shardctl lookup --map customers - < "$TEST_TMP/unit.keys" | cut -f2 | sort -u); do
      required+=("restore-commit@$shard/b$batch/$target:1")
    done
    required+=("restore-committed@$shard/b$batch:1" "restore-removed@$shard/b$batch:1")
  done < <(psql_catalog -XAtF ' ' -c "select s.name, b.batch_no from shardctl.archive_batches b join shardctl.shards s using (shard_id)
                                     where b.op_id = '$RUN' and b.step = 'deleted' order by s.name, b.batch_no")
  [ "$(printf '%s\n' "${required[@]}" | grep -c '^restore-committed@')" -ge 4 ] || fail "fewer than 4 archived batches: ${required[*]}"
  [ "$(printf '%s\n' "${required[@]}" | grep -c "^restore-commit@shard_1/b1/")" = 2 ] ||
    fail "shard_1's first batch does not restore onto two shards: ${required[*]}"
  rm -f "$TEST_TMP/trace"
  SHARDCTL_FAULT_TRACE="$TEST_TMP/trace" expect_exit 0 shardctl archive restore "$RUN"
  require_points "the uninterrupted restore" "$TEST_TMP/trace"
  check_restored
  crash_slice
  in_trace_order

  declare -A killed=()
  chains=0 kills=0
  while [ "${#left[@]}" -gt 0 ]; do
    chains=$((chains + 1))
    step "$ARCH_KIND: chain $chains"
    archived_fleet "restcrash_$ARCH_KIND"
    chain=()
    while :; do
      rm -f "$TEST_TMP/run.trace"
      got=0
      SHARDCTL_FAULT=$(IFS=,; echo "${left[*]}") SHARDCTL_FAULT_TRACE="$TEST_TMP/run.trace" \
        "$SHARDCTL_BIN/shardctl" archive restore "$RUN" >"$STDOUT" 2>"$STDERR" || got=$?
      only_known_points "a restore (chain $chains, after kills at: ${chain[*]})" "$TEST_TMP/run.trace"
      if [ "$got" = 0 ]; then
        [ "${#chain[@]}" -gt 0 ] || fail "the restore finished without reaching ${left[0]}, which the traced restore reached"
        break
      fi
      if [ "$got" != 99 ]; then
        echo "--- stdout:" >&2; head -c 4000 "$STDOUT" >&2
        echo "--- stderr:" >&2; head -c 4000 "$STDERR" >&2
        fail "expected exit 99 or 0 from the restore after kills at ${chain[*]}, got $got"
      fi
      [ -s "$TEST_TMP/run.trace" ] || fail "exit 99 before any step boundary"
      hit=$(tail -n 1 "$TEST_TMP/run.trace" | sed 's/ \([0-9]*\)$/:\1/')
      [ "${#chain[@]}" -gt 0 ] || [ "$hit" = "${left[0]}" ] ||
        fail "a fresh fleet's restore was killed at $hit, not at ${left[0]}: it did not follow the traced restore"
      rest=()
      for p in "${left[@]}"; do [ "$p" = "$hit" ] || rest+=("$p"); done
      [ "${#rest[@]}" = $((${#left[@]} - 1)) ] || fail "killed at $hit, which was not asked for"
      left=("${rest[@]}")
      killed[$hit]=$chains
      kills=$((kills + 1))
      chain+=("$hit")
      step "$ARCH_KIND: chain $chains (killed at ${chain[*]})"
      assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.operations where kind = 'archive-restore'")" 0
      unit=${hit#*@} unit=${unit%:*}
      shard=${unit%%/*} batch=${unit#*/b} batch=${batch%%/*}
      case $hit in
        restore-committed@*) [ "$(unit_archived "$shard" "$batch")" != 0 ] ||
                               fail "batch $unit left the archive before the restore was past restore-committed" ;;
        restore-removed@*) assert_eq "$(unit_archived "$shard" "$batch")" 0 ;;
      esac
    done
    check_restored
    echo "$ARCH_KIND chain $chains: ${#chain[@]} kills: ${chain[*]}"
  done
  step "$ARCH_KIND: after $chains chains"
  [ "${#killed[@]}" = "${#sliced[@]}" ] || fail "killed at ${#killed[@]} of ${#sliced[@]} boundaries"
  for p in "${sliced[@]}"; do [ -n "${killed[$p]:-}" ] || fail "never killed at $p"; done
  echo "$ARCH_KIND: boundaries: ${#required[@]}, killed: ${#sliced[@]}${CRASH_SLICE:+ (slice $CRASH_SLICE)}, chains: $chains, kills: $kills"
  unset killed
done
pass
