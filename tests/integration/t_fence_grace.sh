# [defaults] fence_grace: a fence expires by itself; the database stops refusing writes to the
# moved-away keys once the grace has passed, with no shardctl process involved.
source "$(dirname "$0")/lib.sh"

fresh_fleet grace --shards 2
cat > "$TEST_TMP/shardctl.toml" <<'TOML'
[defaults]
fence_grace = "3s"
TOML
expect_exit 0 shardctl -c "$TEST_TMP/shardctl.toml" split --map customers --at 450 --to shard_2 --batch-size 1000
assert_eq "$(psql_shard 1 -XAtc "select count(*) from shardctl.guard_ranges where state = 'fenced'
                                  and expires_at between now() and now() + interval '3 seconds'")" "1"
err=$(psql_shard 1 -qc "insert into customers values (460, 'stale', 1, now())" 2>&1) && fail "a fenced key was writable"
assert_contains "$err" "has moved to shard shard_2"
sleep 4
psql_shard 1 -qc "insert into customers values (460, 'stale', 1, now())" || fail "the fence did not expire"
psql_shard 1 -qc "delete from customers where customer_id = 460 and name = 'stale'"

# A malformed grace stops every command with file:line:col.
printf '[defaults]\nfence_grace = "soon"\n' > "$TEST_TMP/bad.toml"
expect_exit 65 shardctl -c "$TEST_TMP/bad.toml" op list
expect_stderr_contains "bad.toml:2:15"
pass
