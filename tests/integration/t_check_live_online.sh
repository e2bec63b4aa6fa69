# check while an --online operation is interrupted (killed, not yet resumed) at each point
# where the source's guard triggers exist and no range is guarded yet: the triggers, the
# publication, slot, subscription and stream watch belong to the live operation, so a cron
# check reports none of them. Once the operation is cancelled and its objects are gone, a guard
# trigger planted by hand on a table of the map is reported: the leftover check still works.
source "$(dirname "$0")/lib.sh"

fresh_fleet check_live_online --shards 2 --scale 1
for point in online.slot:1 online.copied:1; do
  step "killed at $point"
  SHARDCTL_FAULT=$point expect_exit 99 shardctl split --map customers --at 300 --to shard_2 --online --batch-size 100
  op=$(last_op)
  # Killed: its lease runs out later; running or interrupted, it is live either way.
  status=$(psql_catalog -XAtc "select status from shardctl.operations where op_id = '$op'")
  [[ "$status" == running || "$status" == interrupted ]] || fail "killed at $point: the operation is $status"
  triggers=$(psql_shard 1 -XAtc "select count(*) from pg_trigger where tgname like 'shardctl_guard%' and not tgisinternal")
  [ "$triggers" -gt 0 ] || fail "killed at $point: no guard trigger on the source, nothing for check to leave alone"
  expect_exit 0 shardctl check --format json
  assert_eq "$(jq -c '[.findings[] | [.kind, .shard, .object]]' "$STDOUT")" "[]"
  expect_exit 0 shardctl op cancel "$op"
  expect_exit 0 shardctl check --format json
  assert_eq "$(jq -c '.findings' "$STDOUT")" "[]"
done

step "a guard trigger no operation owns is still reported"
psql_shard 1 -qc "create trigger shardctl_guard before insert on public.orders for each row execute function suppress_redundant_updates_trigger()"
expect_exit 1 shardctl check --map-consistency --format json
assert_eq "$(jq -c '[.findings[] | [.kind, .shard, .table, .object]]' "$STDOUT")" '[["leftover_guard","shard_1","public.orders","trigger shardctl_guard"]]'
psql_shard 1 -qc "drop trigger shardctl_guard on public.orders"
pass
