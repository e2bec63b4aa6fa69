# [defaults] fence_grace (shardctl.toml(5)): a fence expires by itself; the database stops
# refusing writes to the moved-away keys once the grace has passed, with no shardctl process
# involved. Two fences, so that neither half depends on timing luck: one with a grace of an
# hour refuses writes when checked right away; one with a grace of a second is polled until it
# lets writes through, and is then still there, expired rather than removed.
source "$(dirname "$0")/lib.sh"

fresh_fleet grace --shards 2
printf '[defaults]\nfence_grace = "1h"\n' > "$TEST_TMP/hour.toml"
printf '[defaults]\nfence_grace = "1s"\n' > "$TEST_TMP/second.toml"

# --- a fence within its grace refuses, naming the new shard -----------------------------------
expect_exit 0 shardctl -c "$TEST_TMP/hour.toml" split --map customers --at 450 --to shard_2 --batch-size 1000
n=$(psql_shard 1 -XAtc "select count(*) from shardctl.guard_ranges where state = 'fenced' and lo = '450'
                        and expires_at between now() + interval '59 minutes' and now() + interval '1 hour'")
[ "$n" = 1 ] || fail "1 h grace: want one fence of 450.. expiring within the hour, got: $(psql_shard 1 -XAtc "select * from shardctl.guard_ranges")"
err=$(psql_shard 1 -qc "insert into customers values (460, 'stale', 1, now())" 2>&1) && fail "1 h grace: a fenced key was writable"
[[ "$err" == *"has moved to shard shard_2"* ]] || fail "1 h grace: refused otherwise than by the fence: $err"

# --- a fence past its grace lets writes through -----------------------------------------------
t0=$(psql_shard 1 -XAtc "select now()")
expect_exit 0 shardctl -c "$TEST_TMP/second.toml" split --map customers --at 400 --to shard_2 --batch-size 1000
n=$(psql_shard 1 -XAtc "select count(*) from shardctl.guard_ranges where state = 'fenced' and lo = '400' and hi = '450'
                        and expires_at between timestamptz '$t0' + interval '1 second' and now() + interval '1 second'")
[ "$n" = 1 ] || fail "1 s grace: want one fence of 400..450 expiring a second after its batch, got: $(psql_shard 1 -XAtc "select * from shardctl.guard_ranges")"
# accepted KEY: shard_1 took a write to KEY; a refusal by the fence is "not yet", any other
# error ends the test.
accepted() {
  local err
  err=$(psql_shard 1 -qc "insert into customers values ($1, 'stale', 1, now())" 2>&1) && return 0
  [[ "$err" == *"has moved to shard shard_2"* ]] || fail "1 s grace: the write to $1 failed otherwise than by the fence: $err"
  return 1
}
wait_until "1 s grace: the fence of 400..450 to expire (shard_1 to accept a write to 410)" accepted 410
# Expired, not lifted: the fence is still recorded; the hour's fence still refuses.
n=$(psql_shard 1 -XAtc "select count(*) from shardctl.guard_ranges where state = 'fenced' and lo = '400' and expires_at <= now()")
[ "$n" = 1 ] || fail "1 s grace: the expired fence is no longer recorded (something lifted it)"
err=$(psql_shard 1 -qc "insert into customers values (460, 'stale', 1, now())" 2>&1) &&
  fail "1 h grace: a fenced key became writable when the other fence expired"
[[ "$err" == *"has moved to shard shard_2"* ]] || fail "1 h grace: refused otherwise than by the fence: $err"
psql_shard 1 -qc "delete from customers where customer_id = 410 and name = 'stale'"

# A malformed grace stops every command with file:line:col.
printf '[defaults]\nfence_grace = "soon"\n' > "$TEST_TMP/bad.toml"
expect_exit 65 shardctl -c "$TEST_TMP/bad.toml" op list
expect_stderr_contains "bad.toml:2:15"
pass
