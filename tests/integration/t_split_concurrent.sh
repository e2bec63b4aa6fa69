# Two operations on overlapping ranges never run at once: the second gets exit 75 naming the
# first, and so does resuming an operation another live process is running. The first split is
# held (SHARDCTL_FAULT_PAUSE=journal.copied:1: its first batch copied, offline on its source,
# its lease held) for as long as the test needs, so the overlap is a state, not a race; let go,
# it finishes with every row where it was or moved once.
source "$(dirname "$0")/lib.sh"

fresh_fleet conc --shards 2 --scale 2
before=$(fleet_fingerprint)
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 100 --to shard_2 --batch-size 5 \
  >"$TEST_TMP/a.out" 2>&1 &
a=$!
wait_stopped "$a" "the first split" "$TEST_TMP/a.out"
op=$(last_op)
[ -n "$op" ] && [ "$op" != null ] || fail "the first split is held but journaled no operation"
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r '[.kind, .status, .lease_holder] | join(" ")' "$STDOUT")" "split running $(hostname):$a"

step "an overlapping split is refused, naming the held one"
expect_exit 75 shardctl split --map customers --at 500 --to shard_2 --batch-size 5
expect_stderr_contains "operation $op (split, running) already works on an overlapping range of map customers"
expect_stderr_contains "shardctl op wait $op"
[ "$(last_op)" = "$op" ] || fail "the refused split journaled an operation: $(last_op)"

step "resuming the held one is refused, naming its process"
expect_exit 75 shardctl op resume "$op"
expect_stderr_contains "operation $op is being run by $(hostname):$a"

step "let go, the first split finishes"
kill -CONT "$a"
wait "$a" || fail "the first split failed: $(cat "$TEST_TMP/a.out")"
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
pass
