# Fencing: a runner that lost its catalog session while still alive (frozen, cut off) must not
# touch the map or any row once another process has taken the operation over and finished it.
source "$(dirname "$0")/lib.sh"

fresh_fleet takeover --shards 2
before=$(fleet_fingerprint)

# Runner A freezes right after journaling its first batch as copied.
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 150 --to shard_2 \
  --batch-size 100 >"$TEST_TMP/a.out" 2>&1 &
a=$!
wait_stopped "$a" "runner A" "$TEST_TMP/a.out"
op=$(last_op)

# Its catalog session dies (a network cut, a catalog failover); its shard sessions live on.
psql_catalog -qAtc "select pg_terminate_backend(pid) from pg_stat_activity
                    where datname = current_database() and pid <> pg_backend_pid()" >/dev/null

# B takes over (the session lock is free), with a new fencing token, and finishes.
expect_exit 0 shardctl op resume "$op"
expect_stdout_contains "done"
after_b=$(fleet_fingerprint)
map_b=$(shardctl mapping list --map customers --format json)

# A wakes up: it must stop without changing anything.
kill -CONT "$a"
rc=0
wait "$a" || rc=$?
[ "$rc" = 69 ] || [ "$rc" = 75 ] || fail "runner A exited $rc after losing its lease: $(cat "$TEST_TMP/a.out")"
grep -qE "catalog|taken over" "$TEST_TMP/a.out" || fail "runner A did not say why it stopped: $(cat "$TEST_TMP/a.out")"
assert_eq "$(fleet_fingerprint)" "$after_b"
assert_eq "$(fleet_fingerprint)" "$before"
assert_eq "$(shardctl mapping list --map customers --format json)" "$map_b"
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
assert_fleet_consistent
pass
