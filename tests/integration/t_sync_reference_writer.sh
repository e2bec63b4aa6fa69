# table sync-reference while an application writes the source of truth (man/shardctl-table.1:
# "it is only read, under one snapshot per shard synced, so no write to it is undone or
# waits"). A writer inserts and updates rows of ref_site on shard_1 (its named source), one
# transaction per write, through a sync of two damaged copies that is stopped
# (SHARDCTL_FAULT_PAUSE) at shard_2's commit: its copies locked, its snapshot of the source open.
#  - writes are acknowledged while the sync is held there, and no write fails at all;
#  - no write waits for the sync: each write's transaction, timed on the server from its BEGIN
#    to its last statement, takes under WAIT_BOUND_MS (1 s), and lock_timeout (the same 1 s)
#    turns any wait on a lock into a failure; a wait on the held sync would last as long as
#    the test holds it;
#  - the sync exits 0; every acknowledged write, and nothing else, is on the source (none
#    undone); each copy is the source as of one snapshot: the writes 1..k for one k per shard,
#    inserts and updates alike, every write acknowledged before the sync started among them and,
#    on shard_2, none acknowledged while the sync was held before its commit;
#  - once the writer stops, one more sync makes every copy identical (check --references exits
#    0) with every acknowledged write on every shard.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/refs_lib.sh"

WAIT_BOUND_MS=1000
HELD_WRITES=20   # writes required while the sync is held

refs_fleet sync_writer
psql_shard 2 -qc "delete from ref_site where site_id % 10 = 1"
psql_shard 3 -qc "update ref_site set note = 'stale' where site_id % 10 = 2"

# A failing test leaves no stopped sync behind (it holds locks and snapshots); the writer stops
# by itself once this shell is gone.
sync=""
trap 'status=$?; [ -z "$sync" ] || kill -KILL "$sync" 2>/dev/null; (exit "$status"); _drop_made_databases' EXIT

step "a sync held at shard_2's commit while the source is written: writes go on, none fails or waits"
stop="$TEST_TMP/stop"
acked="$TEST_TMP/acked"    # "I MS": write I acknowledged, its transaction took MS milliseconds
failed="$TEST_TMP/failed"  # "I: ERROR": write I failed (none may)
: >"$acked"
: >"$failed"
shell=$$
(
  i=0
  while [ ! -e "$stop" ] && kill -0 "$shell" 2>/dev/null; do
    i=$((i + 1))
    # One transaction: a new site, and a new note on an old one (city 1 is in country C2).
    if ms=$(psql_shard 1 -qAt 2>"$TEST_TMP/write.err" <<SQL
begin;
set local lock_timeout = '${WAIT_BOUND_MS}ms';
insert into ref_site values ($((100000 + i)), 'C2', 1, 'written $i', null);
update ref_site set note = 'updated $i' where site_id = $i;
select (extract(epoch from clock_timestamp() - now()) * 1000)::int;
commit;
SQL
    ); then
      echo "$i $ms" >>"$acked"
    else
      echo "$i: $(tr '\n' ' ' <"$TEST_TMP/write.err")" >>"$failed"
    fi
  done
) &
writer=$!
wait_until "the writer's first writes" test -s "$acked"
no_failure() { [ ! -s "$failed" ] || fail "a write failed: $(head -3 "$failed")"; }
acked_over() { no_failure; [ "$(wc -l <"$acked")" -ge "$1" ]; }
started=$(wc -l <"$acked")
SHARDCTL_FAULT_PAUSE=references.sync.commit@shard_2 "$SHARDCTL_BIN/shardctl" table sync-reference ref_site \
  >"$STDOUT" 2>"$STDERR" &
sync=$!
wait_stopped "$sync" "the sync" "$STDERR"
held_from=$(wc -l <"$acked")
# Held: shard_2's sync holds its copy locked and its source's snapshot open on shard_1.
assert_eq "$(psql_shard 2 -XAtc "select count(*) from pg_locks where relation = 'ref_site'::regclass
                                 and database = (select oid from pg_database where datname = current_database())
                                 and mode = 'ExclusiveLock' and granted")" 1
[ "$(psql_shard 1 -XAtc "select count(*) from pg_stat_activity where datname = current_database()
                          and state = 'idle in transaction' and backend_xmin is not null")" -ge 1 ] ||
  fail "no snapshot of the source is held"
wait_until "$HELD_WRITES writes acknowledged while the sync is held" acked_over "$((held_from + HELD_WRITES))"
held_to=$(wc -l <"$acked")
assert_eq "$(ps -o stat= -p "$sync" | cut -c1)" T
kill -CONT "$sync"
rc=0
wait "$sync" || rc=$?
sync=""
[ "$rc" = 0 ] || fail "the sync exited $rc: $(cat "$STDERR")"
expect_stdout_contains "shard_2: public.ref_site from shard_1: inserted "
wait_until "writes after the sync" acked_over "$((held_to + 5))"
touch "$stop"
wait "$writer"
no_failure
n=$(wc -l <"$acked")
echo "writes: $started before the sync, $((held_to - held_from)) while it was held, $n in all;" \
  "longest $(sort -k2 -n "$acked" | tail -1 | cut -d' ' -f2) ms"
slow=$(awk -v b="$WAIT_BOUND_MS" '$2 >= b' "$acked" | head -3)
[ -z "$slow" ] || fail "writes waited (write, ms): $slow"
# The log holds writes 1..n, in order: none lost on the writer's side.
assert_eq "$(cut -d' ' -f1 "$acked" | paste -sd' ')" "$(seq 1 "$n" | paste -sd' ')"

step "no acknowledged write undone: every one, and nothing else, on the source"
expected="$n $n"
assert_eq "$(psql_shard 1 -XAtc "select count(*) filter (where site_id > 100000), count(*) filter (where note like 'updated %')
                                 from ref_site" | tr '|' ' ')" "$expected"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from ref_site where site_id between 1 and $n and note <> 'updated ' || site_id")" "0"

step "each copy is the source as of one snapshot: writes 1..k"
# written_prefix I: k when shard I holds exactly writes 1..k (the inserted sites and the
# updated notes of the same writes); fails otherwise.
written_prefix() {
  local got k
  got=$(psql_shard "$1" -XAtc "select count(*) filter (where site_id > 100000), coalesce(max(site_id) - 100000, 0),
                                      count(*) filter (where note like 'updated %'),
                                      count(*) filter (where site_id <= 3000 and note like 'updated %' and note <> 'updated ' || site_id)
                               from ref_site" | tr '|' ' ')
  k=${got%% *}
  [ "$got" = "$k $k $k 0" ] || fail "shard_$1 holds no prefix of the writes (inserted, highest, updated, wrong notes): $got"
  echo "$k"
}
k2=$(written_prefix 2)
k3=$(written_prefix 3)
echo "copies hold writes 1..$k2 (shard_2), 1..$k3 (shard_3)"
[ "$k2" -ge "$started" ] && [ "$k3" -ge "$started" ] || fail "a write acknowledged before the sync is missing on a copy: $k2, $k3 < $started"
# held_from was read once the sync stopped, after shard_2's snapshot was taken: a write that
# committed before that snapshot may have been logged just after the read, none later.
[ "$k2" -le "$((held_from + 1))" ] || fail "shard_2 holds write $k2, acknowledged after its snapshot (held from write $held_from)"

step "once the writer stopped, one more sync: every copy identical, every write on every shard"
expect_exit 0 shardctl table sync-reference ref_site
expect_exit 0 shardctl check --references
for i in 2 3; do assert_eq "$(written_prefix "$i")" "$n"; done
pass
