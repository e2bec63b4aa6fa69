# table sync-reference while an application writes the source of truth (man/shardctl-table.1):
# a writer inserts and updates rows of ref_site on shard_1 (its named source) through a sync
# of two damaged copies. The sync exits 0 (the source is only read, under one snapshot per
# shard: no write waits or is undone); every acknowledged write is on the source; once the
# writer stops, one more sync makes every copy identical (check --references exits 0) with
# every acknowledged write on every shard.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/refs_lib.sh"

refs_fleet sync_writer
psql_shard 2 -qc "delete from ref_site where site_id % 10 = 1"
psql_shard 3 -qc "update ref_site set note = 'stale' where site_id % 10 = 2"

step "a sync while the source is written"
stop="$TEST_TMP/stop"
acked="$TEST_TMP/acked"
: >"$acked"
(
  i=0
  while [ ! -e "$stop" ]; do
    i=$((i + 1))
    # One transaction: a new site, and a new note on an old one (city 1 is in country C2).
    if psql_shard 1 -qc "begin; insert into ref_site values ($((100000 + i)), 'C2', 1, 'written $i', null);
                         update ref_site set note = 'updated $i' where site_id = $i; commit" >/dev/null 2>&1; then
      echo "$i" >>"$acked"
    fi
  done
) &
writer=$!
wait_until "the writer's first writes" test -s "$acked"
expect_exit 0 shardctl table sync-reference ref_site
during=$(wc -l <"$acked")
acked_over() { [ "$(wc -l <"$acked")" -gt "$1" ]; }
wait_until "writes after the sync" acked_over "$((during + 5))"
touch "$stop"
wait "$writer"
n=$(wc -l <"$acked")
[ "$n" -ge 10 ] || fail "only $n writes acknowledged"
# Every acknowledged write, and nothing else, on the source: sites 100001.. and notes 1..n.
expected="$n $n"
assert_eq "$(psql_shard 1 -XAtc "select count(*) filter (where site_id > 100000), count(*) filter (where note like 'updated %')
                                 from ref_site" | tr '|' ' ')" "$expected"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from ref_site where site_id between 1 and $n and note <> 'updated ' || site_id")" "0"

step "once the writer stopped, one more sync: every copy identical, every write on every shard"
expect_exit 0 shardctl table sync-reference ref_site
expect_exit 0 shardctl check --references
for i in 2 3; do
  assert_eq "$(psql_shard "$i" -XAtc "select count(*) filter (where site_id > 100000), count(*) filter (where note like 'updated %')
                                      from ref_site" | tr '|' ' ')" "$expected"
done
pass
