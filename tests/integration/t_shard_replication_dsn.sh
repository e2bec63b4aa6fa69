# A shard's replication DSN (shardctl-shard(1); shardctl-split(1), "Online moves"): the
# connection string an online move's subscription, on the target's server, uses to reach the
# source, when shardctl's host reaches it another way.
#  - shard add/set --replication-dsn, and --replication-dsn '' to remove it; list and show in
#    text and JSON; a DSN with a password is refused (64, in a dry run too), never echoed,
#    nothing changed; what show --format json prints adds an equal shard back;
#  - an online move subscribes with the source's replication DSN (its application_name is in
#    the target's pg_subscription.subconninfo, read while the move is paused after the copy);
#  - a replication DSN the target's server cannot connect with fails the move before anything
#    is created: 69 naming that DSN, no operation journaled, no replication object left.
source "$(dirname "$0")/lib.sh"

fresh_fleet repl_dsn --shards 2 --scale 1
secret=Sup3rS3cretRepl
no_secret() { ! grep -q "$secret" "$STDOUT" "$STDERR" || fail "$1 printed the password"; }
# customers ..500 on shard_1, 500.. on shard_2

step "add, show, list, set and remove a replication DSN"
expect_exit 0 shardctl shard add extra --dsn "host=/tmp dbname=x" --replication-dsn "postgresql://repl@10.0.0.5:5433/x" \
  --format json
assert_eq "$(jq -r .replication_dsn "$STDOUT")" "user=repl dbname=x host=10.0.0.5 port=5433"
expect_exit 0 shardctl shard show extra
expect_stdout_contains "replication dsn: user=repl dbname=x host=10.0.0.5 port=5433"
expect_exit 0 shardctl shard list
expect_stdout_contains "REPLICATION DSN"
grep -E "^extra +online +dbname=x host=/tmp +user=repl dbname=x host=10.0.0.5 port=5433 +-$" "$STDOUT" >/dev/null ||
  fail "shard list lacks extra's replication DSN: $(cat "$STDOUT")"
expect_exit 0 shardctl shard list --format json
assert_eq "$(jq -r '.shards[] | "\(.name)=\(.replication_dsn)"' "$STDOUT" | paste -sd' ')" \
  "extra=user=repl dbname=x host=10.0.0.5 port=5433 shard_1=null shard_2=null"
# --status alone keeps it; --replication-dsn alone keeps the status.
expect_exit 0 shardctl shard set extra --status readonly --format json
assert_eq "$(jq -r '"\(.status) \(.replication_dsn)"' "$STDOUT")" "readonly user=repl dbname=x host=10.0.0.5 port=5433"
expect_exit 0 shardctl shard set extra --replication-dsn "host=10.0.0.6 dbname=x" --dry-run
expect_stdout_contains "would set shard extra replication DSN to dbname=x host=10.0.0.6"
expect_exit 0 shardctl shard set extra --replication-dsn "host=10.0.0.6 dbname=x" --format json
assert_eq "$(jq -r '"\(.status) \(.replication_dsn)"' "$STDOUT")" "readonly dbname=x host=10.0.0.6"
expect_exit 0 shardctl shard set extra --replication-dsn '' --dry-run
expect_stdout_contains "would remove the replication DSN of shard extra"
assert_eq "$(psql_catalog -XAtc "select replication_dsn from shardctl.shards where name = 'extra'")" "dbname=x host=10.0.0.6"
expect_exit 0 shardctl shard set extra --replication-dsn ''
expect_stdout_contains "replication dsn: -"
assert_eq "$(psql_catalog -XAtc "select replication_dsn is null from shardctl.shards where name = 'extra'")" "t"
expect_exit 0 shardctl shard show extra --format json
assert_eq "$(jq -r '"\(.status) \(.replication_dsn)"' "$STDOUT")" "readonly null"
expect_exit 64 shardctl shard set extra
expect_stderr_contains "--status, --replication-dsn or --app-dsn is required"

step "a replication DSN with a password is refused, nothing changed"
before=$(catalog_dump)
for dry in "" --dry-run; do
  expect_exit 64 shardctl shard add pw --dsn "host=/tmp dbname=x" --replication-dsn "host=h password=$secret" $dry
  expect_stderr_contains "the replication DSN of shard pw contains a password; shardctl stores and uses none"
  expect_stderr_contains "~/.pgpass"
  no_secret "shard add --replication-dsn $dry"
  expect_exit 64 shardctl shard set extra --replication-dsn "postgresql://repl:$secret@h/x" $dry
  expect_stderr_contains "the replication DSN of shard extra contains a password"
  no_secret "shard set --replication-dsn $dry"
done
assert_eq "$(catalog_dump)" "$before"

step "JSON round trip: what show prints adds an equal shard"
expect_exit 0 shardctl shard set extra --replication-dsn "postgresql://repl@10.0.0.5:5433/x?application_name=moves"
expect_exit 0 shardctl shard show extra --format json
expect_exit 0 shardctl shard add copy --dsn "$(jq -r .dsn "$STDOUT")" --replication-dsn "$(jq -r .replication_dsn "$STDOUT")" \
  --status "$(jq -r .status "$STDOUT")"
expect_exit 0 shardctl shard list --format json
assert_eq "$(jq -c '.shards[] | select(.name == "copy") | del(.name)' "$STDOUT")" \
  "$(jq -c '.shards[] | select(.name == "extra") | del(.name)' "$STDOUT")"
assert_eq "$(jq -r '.shards[] | select(.name == "copy") | .replication_dsn' "$STDOUT")" \
  "user=repl dbname=x host=10.0.0.5 port=5433 application_name=moves"
expect_exit 0 shardctl shard remove extra --yes
expect_exit 0 shardctl shard remove copy --yes

step "an online move subscribes with the source's replication DSN"
expect_exit 0 shardctl shard set shard_2 --replication-dsn "$(shard_dsn 2) application_name=repl_dsn_$$"
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 700 --to shard_1 --online \
  >"$TEST_TMP/move.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the move" "$TEST_TMP/move.out"
conninfo=$(psql_shard 1 -XAtc "select subconninfo from pg_subscription where subname like 'shardctl_op_%'
                               and subdbid = (select oid from pg_database where datname = current_database())")
kill -CONT "$pid"
got=0
wait "$pid" || got=$?
[ "$got" = 0 ] || fail "the move exited $got: $(cat "$TEST_TMP/move.out")"
assert_contains "$conninfo" "application_name=repl_dsn_$$"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers where customer_id = 700")" "1"
assert_eq "$(shardctl_streams 1)$(shardctl_streams 2)" ""
assert_fleet_consistent

step "a replication DSN the target's server cannot connect with: 69 before anything is created"
# shard_1 holds every key now: it is the source.
expect_exit 0 shardctl shard set shard_1 --replication-dsn "$(shard_dsn 1) port=1"
before=$(catalog_dump)
data=$(fleet_fingerprint)
expect_exit 69 shardctl move --map customers --key 300 --to shard_2 --online
expect_stderr_contains "the server of shard shard_2 cannot reach shard shard_1 with its replication DSN ("
expect_stderr_contains "port=1"
expect_stderr_contains "could not connect to the publisher"
expect_stderr_contains "shardctl shard set shard_1 --replication-dsn DSN"
assert_eq "$(catalog_dump)" "$before"
assert_eq "$(fleet_fingerprint)" "$data"
assert_eq "$(shardctl_streams 1)$(shardctl_streams 2)" ""
pass
