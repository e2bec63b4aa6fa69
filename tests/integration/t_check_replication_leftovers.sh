# check --map-consistency reports shardctl replication objects (shardctl_op_<hex>_<n>: an online
# move's publication, slot and subscription) whose operation is over or unknown: slots critical,
# publications and subscriptions warnings, each naming its operation, status and fix; those of a
# live operation are not findings. `op cancel` of an operation that is over (or unknown) drops
# exactly what is named after it, subscription first; objects named otherwise are never
# reported nor touched. The objects are made by hand (the test clusters run wal_level=logical).
source "$(dirname "$0")/lib.sh"

fresh_fleet check_repl --shards 3 --scale 1
# customers ..334 on shard_1, 334..667 on shard_2, 667.. on shard_3
hex() { echo "${1//-/}"; }
objects() {  # every publication, logical slot and subscription of shard N's database, sorted
  psql_shard "$1" -XAt -c "select 'publication ' || pubname from pg_publication
    union all select 'slot ' || slot_name from pg_replication_slots where database = current_database()
    union all select 'subscription ' || subname from pg_subscription s join pg_database d on d.oid = s.subdbid
      where d.datname = current_database()" | LC_ALL=C sort | paste -sd, -
}
sorted() { printf '%s\n' "$@" | LC_ALL=C sort | paste -sd, -; }
publish() { psql_shard "$1" -qc "create publication \"$2\""; }
slot() { psql_shard "$1" -qAtc "select from pg_create_logical_replication_slot('$2', 'pgoutput')"; }
subscribe() {  # disabled, never connecting: a target's subscription as a crash may leave it
  psql_shard "$1" -qc "set client_min_messages = error;
    create subscription \"$2\" connection 'dbname=nowhere' publication \"$2\" with (connect = false)"
}

step "operations: live (interrupted), done, unknown"
SHARDCTL_FAULT=journal.offline:1 expect_exit 99 shardctl split --map customers --at 200 --to shard_3 --batch-size 50
live=$(last_op)
expect_exit 0 shardctl split --map customers --at 900 --to shard_1 --batch-size 1000
done_op=$(last_op)
assert_eq "$(psql_catalog -XAtc "select status from shardctl.operations where op_id = '$done_op'")" "done"
unknown=00000000-0000-4000-8000-0000000000aa
L=shardctl_op_$(hex "$live")_1 D=shardctl_op_$(hex "$done_op")_1 U=shardctl_op_$(hex "$unknown")_1
expect_exit 0 shardctl check --map-consistency --format json
assert_eq "$(jq -c '.findings' "$STDOUT")" "[]"

step "leftovers made by hand, and objects shardctl does not own"
publish 1 "$U"; slot 1 "$U"                       # an operation the catalog does not know
publish 3 "$D"; slot 3 "$D"; subscribe 1 "$D"     # a finished one: source shard_3, target shard_1
publish 1 "$L"; slot 1 "$L"; subscribe 3 "$L"     # the live one: not findings
publish 2 shardctl_op_manual; slot 2 not_shardctl; publish 2 "shardctl_op_$(hex "$unknown")_01"
before2=$(objects 2)

step "check reports the leftovers: exit 2, text, JSON, Nagios"
expect_exit 2 shardctl check --map-consistency --format json
assert_eq "$(jq -r '.status + " " + (.exit_code | tostring)' "$STDOUT")" "critical 2"
assert_eq "$(jq -c '[.findings[] | [.kind, .severity, .shard, .object, .count]] | sort' "$STDOUT")" "$(jq -nc \
  --arg U "$U" --arg D "$D" '[
  ["leftover_replication", "warning", "shard_1", "publication \($U)", 1],
  ["leftover_slot", "critical", "shard_1", "slot \($U)", 1],
  ["leftover_replication", "warning", "shard_1", "subscription \($D)", 1],
  ["leftover_replication", "warning", "shard_3", "publication \($D)", 1],
  ["leftover_slot", "critical", "shard_3", "slot \($D)", 1]] | sort')"
assert_eq "$(jq -r '.summary.leftover_slot, .summary.leftover_replication' "$STDOUT" | paste -sd' ')" "2 3"
detail() { jq -r --arg o "$1" '.findings[] | select(.object == $o) | .detail' "$STDOUT"; }
assert_eq "$(detail "slot $D")" "slot of operation $done_op, which is done (wal_status reserved, no process streams from it): it keeps WAL on this shard's server until it is dropped; \`shardctl op cancel $done_op\` drops it"
assert_eq "$(detail "subscription $D")" "subscription of operation $done_op, which is done (disabled); \`shardctl op cancel $done_op\` drops it"
assert_eq "$(detail "slot $U")" "slot of operation $unknown, no such operation (wal_status reserved, no process streams from it): it keeps WAL on this shard's server until it is dropped; \`shardctl op cancel $unknown\` drops it, or on this shard: SELECT pg_drop_replication_slot('$U');"
assert_eq "$(detail "publication $U")" "publication of operation $unknown, no such operation; \`shardctl op cancel $unknown\` drops it, or on this shard: DROP PUBLICATION \"$U\";"
expect_exit 2 shardctl check --map-consistency
expect_stdout_contains "critical  leftover_slot"
expect_stdout_contains "status: CRITICAL (2 critical, 3 warning finding(s); 3 shard(s) checked, 0 unreachable)"
expect_exit 2 shardctl check --map-consistency --format nagios
expect_stdout_contains "SHARDCTL CRITICAL - 2 left-over replication slots, 3 left-over publications and subscriptions | "
expect_stdout_contains " leftover_slot=2 leftover_replication=3 "
# Only --map-consistency looks for them; a slot graded as a warning leaves a warning run.
expect_exit 0 shardctl check --orphans --strays --format json
printf '[check]\nwarning = ["leftover_slot"]\n' > "$TEST_TMP/warn.toml"
expect_exit 1 shardctl -c "$TEST_TMP/warn.toml" check --map-consistency --format json
# --fix acts on rows only: the objects stay.
expect_exit 2 shardctl check --fix quarantine --format json
assert_eq "$(objects 3)" "publication $D,slot $D,subscription $L"

step "op cancel of a done operation drops what is named after it, on every shard"
expect_exit 0 shardctl op cancel "$done_op" --dry-run
expect_stdout_contains "operation $done_op is already done"
expect_stdout_contains "would drop slot $D on shard_3"
assert_eq "$(objects 3)" "publication $D,slot $D,subscription $L"
expect_exit 0 shardctl op cancel "$done_op"
assert_eq "$(sed 1d "$STDOUT")" "dropped subscription $D on shard_1
dropped slot $D on shard_3
dropped publication $D on shard_3"
assert_eq "$(objects 3)" "subscription $L"
assert_eq "$(objects 1)" "$(sorted "publication $L" "publication $U" "slot $L" "slot $U")"
assert_eq "$(objects 2)" "$before2"
assert_eq "$(psql_catalog -XAtc "select status from shardctl.operations where op_id = '$done_op'")" "done"
expect_exit 0 shardctl op cancel "$done_op" --format json
assert_eq "$(jq -c '[.status, .replication_objects_dropped]' "$STDOUT")" '["done",[]]'

step "an unknown operation: the hint's SQL, then op cancel; an id naming nothing is still 64"
sql=$(shardctl check --map-consistency --format json | jq -r --arg o "slot $U" '.findings[] | select(.object == $o) | .detail | sub(".*or on this shard: "; "")') || true
psql_shard 1 -qAtc "$sql" >/dev/null
expect_exit 1 shardctl check --map-consistency --format json
assert_eq "$(jq -c '[.findings[] | .object]' "$STDOUT")" "[\"publication $U\"]"
expect_exit 0 shardctl op cancel "$unknown" --format json
assert_eq "$(jq -c '[.status, .replication_objects_dropped]' "$STDOUT")" "[null,[{\"kind\":\"publication\",\"name\":\"$U\",\"shard\":\"shard_1\"}]]"
expect_exit 64 shardctl op cancel "$unknown"
expect_stderr_contains "no operation $unknown"
assert_eq "$(objects 1)" "publication $L,slot $L"
assert_eq "$(objects 2)" "$before2"

step "clean; the live operation's objects stay until it is over"
expect_exit 0 shardctl check --format json
assert_eq "$(jq -c '.findings' "$STDOUT")" "[]"
expect_exit 0 shardctl op cancel "$live"
expect_exit 0 shardctl op cancel "$live"   # over now: drops whatever is still named after it
assert_eq "$(objects 1)" ""
assert_eq "$(objects 3)" ""
expect_exit 0 shardctl check --format json
assert_eq "$(jq -c '.findings' "$STDOUT")" "[]"
assert_eq "$(objects 2)" "$before2"
psql_shard 2 -qAtc "select from pg_drop_replication_slot('not_shardctl')"

step "a stream watch (the keys an online move's target records) of an operation that is over"
psql_shard 1 -qX -v ON_ERROR_STOP=1 -f "$(dirname "$0")/../../lib/shardside/sql/stream_keys.sql"
psql_shard 1 -qAtc "insert into shardctl.stream_watch values ('$D', 'public.customers'), ('$U', 'public.customers'), ('shardctl_op_manual', 'public.customers');
  insert into shardctl.stream_keys values ('$D', 'public.customers', '7'), ('$U', 'public.customers', '8')"
expect_exit 1 shardctl check --map-consistency --format json
assert_eq "$(jq -c '[.findings[] | [.kind, .severity, .shard, .object]] | sort' "$STDOUT")" "$(jq -nc --arg U "$U" --arg D "$D" '[
  ["leftover_replication", "warning", "shard_1", "stream_watch \($D)"],
  ["leftover_replication", "warning", "shard_1", "stream_watch \($U)"]] | sort')"
assert_eq "$(detail "stream_watch $D")" "stream_watch of operation $done_op, which is done (its tables' triggers record the keys a replica-mode write changes); \`shardctl op cancel $done_op\` drops it"
sql=$(detail "stream_watch $U" | sed 's/.*or on this shard: //')
assert_eq "$sql" "DELETE FROM shardctl.stream_watch WHERE stream = '$U'; DELETE FROM shardctl.stream_keys WHERE stream = '$U';"
expect_exit 0 shardctl op cancel "$done_op"
assert_eq "$(sed 1d "$STDOUT")" "dropped stream_watch $D on shard_1"
psql_shard 1 -qAtc "$sql"
assert_eq "$(psql_shard 1 -XAtc "select string_agg(stream, ',' order by stream) from (select stream from shardctl.stream_watch union all select stream from shardctl.stream_keys) s")" "shardctl_op_manual"
expect_exit 0 shardctl check --format json
assert_eq "$(jq -c '.findings' "$STDOUT")" "[]"
pass
