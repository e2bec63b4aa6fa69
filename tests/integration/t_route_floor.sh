# Route floors (lib/migrate/guard.hpp, lib/shardside/sql/guard.sql): a transaction states the
# map version it routed by in shardctl.route; a shard that gave keys of the map away refuses an
# older one (55000, shardctl_stale_route) for every key of the map, moved or not, and at
# shardctl.assert_route, which also checks reads. The floor is raised by the purge with the fence,
# after offline and online moves and on every source of a merge, and stays after fence_grace
# and `op unfence`. A malformed value is 22023 (shardctl_bad_route), never "no version"; '' is
# "no version". The moving (offline range, cut-over) and fenced refusals carry their constraint
# names and a JSON DETAIL, read here with psycopg (constraint_name, message_detail) and checked
# field by field with jq.
source "$(dirname "$0")/lib.sh"

# /usr/bin/python3 has psycopg (the first python3 on PATH may not).
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import psycopg' 2>/dev/null || skip "no /usr/bin/python3 with psycopg"
cat > "$TEST_TMP/tx.py" <<'EOF'
# tx.py DSN SQL...: runs the statements in one transaction, rolled back. Prints "ok" and the
# last statement's first value, or the error: SQLSTATE, constraint name, then the DETAIL.
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    try:
        with c.transaction(force_rollback=True):
            value = None
            for sql in sys.argv[2:]:
                cur = c.execute(sql)
                if cur.description: value = cur.fetchone()[0]
        print("ok"); print(value)
    except psycopg.Error as e:
        print(e.sqlstate); print(e.diag.constraint_name or ""); print(e.diag.message_detail or "")
EOF

# tx SHARD SQL...: the outcome of tx.py on shard SHARD, in OUT (a file: ok or the SQLSTATE, the
# constraint or value, the DETAIL).
OUT=$TEST_TMP/tx.out
tx() { local n=$1; shift; /usr/bin/python3 "$TEST_TMP/tx.py" "$(shard_dsn "$n")" "$@" > "$OUT" || fail "tx.py failed: $*"; }
outcome() { sed -n 1p "$OUT"; }
second() { sed -n 2p "$OUT"; }
detail() { sed -n '3,$p' "$OUT"; }
# refused_as SHARD STATE SQL...: the transaction is refused with 55000 and the constraint of
# STATE (moving, fenced, stale_route), and its DETAIL is a JSON object whose state is STATE.
refused_as() {
  local n=$1 state=$2; shift 2
  tx "$n" "$@"
  [ "$(outcome)" = 55000 ] || fail "shard_$n: not refused with 55000 ($(cat "$OUT")): $*"
  assert_eq "$(second)" "shardctl_$state"
  detail | jq -e . >/dev/null || fail "DETAIL is not JSON: $(detail)"
  assert_eq "$(detail | jq -r .state)" "$state"
}
# field NAME: the DETAIL's field NAME (jq -c: strings quoted, null as null).
field() { detail | jq -c ".$1"; }
accepted() { local n=$1; shift; tx "$n" "$@"; [ "$(outcome)" = ok ] || fail "shard_$n refused ($(cat "$OUT")): $*"; }
bad_route() {
  local n=$1; shift
  tx "$n" "$@"
  assert_eq "$(outcome) $(second)" "22023 shardctl_bad_route"
}
# guard_triggers SHARD: the guard's triggers of the shard's tables (not the partitions' clones),
# each as table:name/tgtype:tgenabled, '?' when it has a WHEN.
guard_triggers() {
  psql_shard "$1" -XAtc "select string_agg(c.relname || ':' || t.tgname || '/' || t.tgtype || ':' || t.tgenabled::text
                         || case when t.tgqual is null then '' else '?' end, ',' order by c.relname, t.tgname)
                         from pg_trigger t join pg_class c on c.oid = t.tgrelid
                         where t.tgname like 'shardctl\_guard%' and t.tgparentid = 0"
}
# The light trigger alone (lib/migrate/guard.hpp): a statement trigger on the plain tables
# (BEFORE INSERT OR UPDATE OR DELETE: 30), a row trigger on the partitioned one (31).
light="customers:shardctl_guard_route/30:A?,order_lines:shardctl_guard_route/30:A?,orders:shardctl_guard_route/30:A?"
light+=",visits:shardctl_guard_route/31:A?"
map_version() { psql_catalog -XAtc "select version from shardctl.maps where name = 'customers'"; }
flip_version() { psql_catalog -XAtc "select max(flip_version) from shardctl.op_batches where op_id = '$1'"; }
floor_of() { psql_shard "$1" -XAtc "select min_version from shardctl.route_floors where map_name = 'customers'"; }

fresh_fleet floor --shards 3 --scale 1
map_id=$(psql_catalog -XAtc "select map_id from shardctl.maps where name = 'customers'")
# A partitioned sharded table: its row trigger checks a stated route for every row.
for i in 1 2 3; do
  psql_shard "$i" -qc "create table public.visits (customer_id bigint not null, at date not null, primary key (customer_id, at))
                         partition by range (at);
                       create table public.visits_2024 partition of public.visits for values from ('2024-01-01') to ('2025-01-01');
                       create table public.visits_rest partition of public.visits default"
done
psql_shard 1 -qc "insert into visits values (100, '2024-03-01'), (250, '2024-03-01'), (250, '2026-01-01')"
shardctl table add-sharded visits --map customers --key customer_id >/dev/null

step "the moving refusal: an offline batch (and TRUNCATE), constraint and DETAIL"
SHARDCTL_FAULT_PAUSE=journal.copied:1 "$SHARDCTL_BIN/shardctl" split --map customers --at 200 --to shard_3 \
  --batch-size 1000 >"$TEST_TMP/split.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the split" "$TEST_TMP/split.out"
split_op=$(last_op)
refused_as 1 moving "update customers set name = 'x' where customer_id = 250"
assert_eq "$(field map) $(field map_id) $(field operation) $(field new_owner)" "\"customers\" $map_id \"$split_op\" \"shard_3\""
assert_eq "$(field min_version) $(field stated_version) $(field key) $(field table)" "null null \"250\" \"public.customers\""
refused_as 1 moving "delete from order_lines where customer_id = 260"
assert_eq "$(field key) $(field table)" "\"260\" \"public.order_lines\""
refused_as 1 moving "truncate order_lines"
assert_eq "$(field key) $(field table) $(field operation)" "null \"public.order_lines\" \"$split_op\""
# Keys not moving stay writable.
accepted 1 "update customers set name = name where customer_id = 100"
v0=$(map_version)
kill -CONT "$pid"
wait "$pid" || fail "the split failed: $(cat "$TEST_TMP/split.out")"

step "the floor: raised to the flip's version on the source, with the fence"
v1=$(flip_version "$split_op")
[ "$v1" -gt "$v0" ] || fail "the flip version $v1 is not above the version $v0 before it"
assert_eq "$(psql_shard 1 -XAtc "select map_id, map_name, min_version, op_id, new_shard, raised_at is not null
                                 from shardctl.route_floors")" "$map_id|customers|$v1|$split_op|shard_3|t"
assert_eq "$(psql_shard 1 -XAtc "select map_name from shardctl.guard_ranges where op_id = '$split_op'")" "customers"
assert_eq "$(psql_shard 3 -XAtc "select count(*) from shardctl.route_floors")" "0"

step "a stale version is refused on the old source, for moved keys and keys that did not move"
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "insert into orders values (100, 999001, now(), 'new')"
assert_eq "$(field map) $(field map_id) $(field operation) $(field new_owner)" "\"customers\" $map_id \"$split_op\" \"shard_3\""
# A key that did not move: the statement trigger refuses (the row trigger checks the route only
# before a refusal of its own), naming no key.
assert_eq "$(field min_version) $(field stated_version) $(field key) $(field table)" "$v1 $v0 null \"public.orders\""
refused_as 1 stale_route "select set_config('shardctl.route', 'other_map:1,customers:$v0', true)" \
  "insert into customers values (250, 'stale', 1, now())"
assert_eq "$(field min_version) $(field stated_version) $(field key)" "$v1 $v0 \"250\""
# A DELETE is checked once a statement (no row trigger on DELETE): no key named.
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "delete from order_lines where customer_id = 5"
assert_eq "$(field key) $(field table) $(field stated_version)" "null \"public.order_lines\" $v0"
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "truncate order_lines"
# A partitioned table: every row is checked, through its parent or a partition named directly.
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "insert into visits values (100, '2024-05-01')"
assert_eq "$(field key) $(field table)" "\"100\" \"public.visits_2024\""
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "delete from visits_2024 where customer_id = 100"
# A row trigger: a statement that writes no row is not checked there.
accepted 1 "set local shardctl.route = 'customers:$v0'" "delete from visits_rest where customer_id = 100"
refused_as 1 fenced "set local shardctl.route = 'customers:$v1'" "insert into visits values (250, '2024-05-01')"
accepted 1 "set local shardctl.route = 'customers:$v1'" "insert into visits values (100, '2024-05-01')"
assert_eq "$(psql_shard 3 -XAtc "select count(*) from visits where customer_id = 250")" "2"

step "the flip's version or later works; no version behaves as before"
accepted 1 "set local shardctl.route = 'customers:$v1'" "insert into orders values (100, 999001, now(), 'new')"
accepted 1 "set local shardctl.route = 'customers:$((v1 + 5))'" "update customers set name = name where customer_id = 100"
accepted 1 "insert into orders values (100, 999001, now(), 'new')"
accepted 1 "set local shardctl.route = ''" "insert into orders values (100, 999001, now(), 'new')"
# Another map's stale version does not concern this one.
accepted 1 "set local shardctl.route = 'other_map:1'" "insert into orders values (100, 999001, now(), 'new')"
# A moved key with a current version: the fence, naming the floor and the stated version.
refused_as 1 fenced "set local shardctl.route = 'customers:$v1'" "insert into orders values (250, 999001, now(), 'new')"
assert_eq "$(field map) $(field operation) $(field new_owner) $(field min_version) $(field stated_version) $(field key)" \
  "\"customers\" \"$split_op\" \"shard_3\" $v1 $v1 \"250\""
refused_as 1 fenced "insert into orders values (250, 999001, now(), 'new')"
assert_eq "$(field stated_version) $(field table)" "null \"public.orders\""

step "assert_route: refuses a stale read at once, returns the floor; an application role may call it"
psql_shard 1 -qc "create role route_app_$$ login; grant usage on schema public to route_app_$$;
                  grant select, insert, update, delete on all tables in schema public to route_app_$$"
app_dsn="$(shard_dsn 1) user=route_app_$$"
tx_app() { /usr/bin/python3 "$TEST_TMP/tx.py" "$app_dsn" "$@" > "$OUT" || fail "tx.py failed: $*"; }
tx_app "select shardctl.assert_route('customers', $v0)" "select count(*) from customers"
assert_eq "$(outcome) $(second)" "55000 shardctl_stale_route"
assert_eq "$(detail | jq -c '[.state, .map, .min_version, .stated_version, .key, .table]')" \
  "[\"stale_route\",\"customers\",$v1,$v0,null,null]"
tx_app "select shardctl.assert_route('customers', $v1)"
assert_eq "$(outcome) $(second)" "ok $v1"
# It states the version for the transaction: a later write of the transaction is checked by it.
tx_app "select shardctl.assert_route('other_map', 3)" "select shardctl.assert_route('customers', $v1)" \
  "select current_setting('shardctl.route')"
assert_eq "$(second)" "other_map:3,customers:$v1"
tx_app "set local shardctl.route = 'customers:$v0'" "select shardctl.assert_route('other_map', 3)" \
  "update customers set name = name where customer_id = 100"
assert_eq "$(outcome) $(second)" "55000 shardctl_stale_route"
# The setting ends with its transaction (what a pooled connection's next client sees).
assert_eq "$(psql_shard 1 -XAtq -c "begin" -c "select shardctl.assert_route('customers', $v1)" -c "commit" \
  -c "select '[' || current_setting('shardctl.route', true) || ']'")" "$v1
[]"
# The application role reads nothing else of shardctl's.
tx_app "select count(*) from shardctl.route_floors"
assert_eq "$(outcome)" "42501"
tx_app "select shardctl.check_route($map_id, 'customers:1', null, null)"
assert_eq "$(outcome)" "42501"
# NULL arguments and bad names: clear errors.
tx 1 "select shardctl.assert_route(null, 3)"
assert_eq "$(outcome)" "22004"
tx 1 "select shardctl.assert_route('customers', null)"
assert_eq "$(outcome)" "22004"
bad_route 1 "select shardctl.assert_route('bad name', 3)"
bad_route 1 "select shardctl.assert_route('customers', -1)"
# The target of the move has the guard's objects too: no floor there.
tx 3 "select shardctl.assert_route('customers', 1)"
assert_eq "$(outcome) $(second)" "ok 0"

step "malformed values are refused (22023), at a write and at assert_route; '' is no version"
long_name=$(head -c 100000 /dev/zero | tr '\0' a)
long_digits=$(head -c 100000 /dev/zero | tr '\0' 7)
: > "$TEST_TMP/bad_values"
for value in garbage 'customers:' 'customers:-1' 'customers:1,' ',customers:1' 'customers:1;x' 'customers: 1' \
  'customers:1 ' $'\xef\xbb\xbfcustomers:1' 'customers:99999999999999999999' 'customers:9223372036854775808' \
  'customers:+1' '1customers:1' "$(printf 'm%.0s' {1..64}):1" "$long_name:1" "customers:$long_digits" \
  "$long_name" "customers:1,$long_name"; do
  printf '%s\0' "$value" >> "$TEST_TMP/bad_values"
done
# Each value (NUL-separated in the file) set with set_config, then a write (a row trigger, a
# statement trigger) or assert_route, each in a transaction of its own: one line each.
cat > "$TEST_TMP/bad.py" <<'EOF'
import sys, psycopg
values = open(sys.argv[2], 'rb').read().split(b'\0')[:-1]
with psycopg.connect(sys.argv[1], autocommit=True) as c:
    for v in values:
        for sql in sys.argv[3:]:
            try:
                with c.transaction(force_rollback=True):
                    c.execute("select set_config('shardctl.route', %s, true)", (v.decode(),))
                    c.execute(sql)
                print("accepted", v[:40])
            except psycopg.Error as e:
                print(e.sqlstate, e.diag.constraint_name)
EOF
/usr/bin/python3 "$TEST_TMP/bad.py" "$(shard_dsn 1)" "$TEST_TMP/bad_values" "insert into orders values (100, 999001, now(), 'new')" \
  "delete from order_lines where customer_id = 5" "select shardctl.assert_route('customers', $v1)" > "$TEST_TMP/bad.out"
assert_eq "$(sort "$TEST_TMP/bad.out" | uniq -c | sed 's/^ *//')" "54 22023 shardctl_bad_route"
# Long values that are the grammar are taken: many maps, a 63-character name, a 19-digit version.
many=$(for i in $(seq 1 2000); do printf 'map_%d:%d,' "$i" "$i"; done)
accepted 1 "select set_config('shardctl.route', '${many}customers:$v1', true)" "insert into orders values (100, 999001, now(), 'new')"
accepted 1 "select set_config('shardctl.route', '$(printf 'm%.0s' {1..63}):9223372036854775807,customers:$v1', true)" \
  "insert into orders values (100, 999001, now(), 'new')"
refused_as 1 stale_route "select set_config('shardctl.route', '${many}customers:$v0', true)" "select 1" \
  "insert into orders values (100, 999001, now(), 'new')"

step "after op unfence: the moved keys take writes again, the old version is still refused"
expect_exit 0 shardctl op unfence "$split_op"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from shardctl.guard_ranges")" "0"
assert_eq "$(floor_of 1)" "$v1"
# The light trigger alone checks the floor now; the partitions have its clones.
assert_eq "$(guard_triggers 1)" "$light"
assert_eq "$(psql_shard 1 -XAtc "select string_agg(c.relname, ',' order by c.relname) from pg_trigger t
                                 join pg_class c on c.oid = t.tgrelid where t.tgname = 'shardctl_guard_route' and t.tgparentid <> 0")" \
  "visits_2024,visits_rest"
accepted 1 "insert into customers values (250, 'back', 1, now())"
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "insert into customers values (250, 'back', 1, now())"
assert_eq "$(field map) $(field map_id) $(field operation) $(field new_owner)" "\"customers\" $map_id \"$split_op\" \"shard_3\""
assert_eq "$(field min_version) $(field stated_version) $(field key) $(field table)" "$v1 $v0 null \"public.customers\""
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "update customers set name = name where customer_id = 100"
refused_as 1 stale_route "select set_config('shardctl.route', 'other_map:1,customers:$v0', true)" \
  "delete from order_lines where customer_id = 5"
assert_eq "$(field key) $(field table) $(field stated_version)" "null \"public.order_lines\" $v0"
accepted 1 "set local shardctl.route = 'customers:$v1'" "insert into customers values (250, 'back', 1, now())"
accepted 1 "set local shardctl.route = ''" "insert into orders values (100, 999001, now(), 'new')"
accepted 1 "set local shardctl.route = 'other_map:1'" "insert into orders values (100, 999001, now(), 'new')"
# No TRUNCATE trigger without a range (nothing to guard): a stale TRUNCATE is not refused.
accepted 1 "set local shardctl.route = 'customers:$v0'" "truncate order_lines"
# Malformed values: still 22023, on both forms.
bad_route 1 "set local shardctl.route = 'customers:'" "insert into orders values (100, 999001, now(), 'new')"
bad_route 1 "select set_config('shardctl.route', 'garbage', true)" "insert into visits_rest values (100, '2026-02-01')"
# The partitioned table: every row is checked, through its parent or a partition named directly,
# the key named; a statement that writes no row is not checked; no version writes freely.
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "insert into visits_2024 values (250, '2024-06-01')"
assert_eq "$(field key) $(field table) $(field min_version) $(field stated_version)" "\"250\" \"public.visits_2024\" $v1 $v0"
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "delete from visits_2024 where customer_id = 100"
assert_eq "$(field key) $(field table)" "\"100\" \"public.visits_2024\""
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "update visits set at = at where customer_id = 100"
accepted 1 "set local shardctl.route = 'customers:$v0'" "delete from visits_rest where customer_id = 999"
accepted 1 "insert into visits_2024 values (250, '2024-06-01')"
accepted 1 "set local shardctl.route = 'customers:$v1'" "insert into visits values (250, '2024-06-01')"
# check counts the floor's triggers as expected, not as left over.
expect_exit 0 shardctl check --map-consistency --format json
assert_eq "$(jq '[.findings[] | select(.kind == "leftover_guard")] | length' "$STDOUT")" "0"

step "after fence_grace: the moved keys take writes again, the old version is still refused"
printf '[defaults]\nfence_grace = "1s"\n' > "$TEST_TMP/second.toml"
before_grace=$(map_version)
expect_exit 0 shardctl -c "$TEST_TMP/second.toml" split --map customers --at 600 --to shard_3 --batch-size 1000
grace_op=$(last_op)
v2=$(flip_version "$grace_op")
assert_eq "$(floor_of 2)" "$v2"
expired() {
  tx 2 "insert into customers values (610, 'back', 1, now())"
  [ "$(outcome)" = ok ] && return 0
  assert_eq "$(outcome) $(second)" "55000 shardctl_fenced"
  return 1
}
wait_until "the fence of 600.. on shard_2 to expire" expired
refused_as 2 stale_route "set local shardctl.route = 'customers:$before_grace'" "insert into customers values (610, 'back', 1, now())"
assert_eq "$(field min_version) $(field operation)" "$v2 \"$grace_op\""
accepted 2 "set local shardctl.route = 'customers:$v2'" "insert into customers values (610, 'back', 1, now())"
# The expired fence is still recorded (`check` names it, with `op unfence`), so the guard's
# triggers stay until it is lifted; then the light trigger alone.
[[ "$(guard_triggers 2)" == *"customers:shardctl_guard_insert/"* ]] || fail "shard_2 lost the guard's triggers: $(guard_triggers 2)"
expect_exit 0 shardctl op unfence "$grace_op"
assert_eq "$(guard_triggers 2)" "$light"
refused_as 2 stale_route "set local shardctl.route = 'customers:$before_grace'" "insert into customers values (610, 'back', 1, now())"
assert_eq "$(field min_version) $(field operation) $(field key)" "$v2 \"$grace_op\" null"
refused_as 2 stale_route "set local shardctl.route = 'customers:$before_grace'" "insert into visits_rest values (610, '2026-03-01')"
assert_eq "$(field key) $(field table)" "\"610\" \"public.visits_rest\""
accepted 2 "insert into customers values (611, 'back', 1, now())"

step "the cut-over's refusal: a REPEATABLE READ writer held at it is refused as moving"
before_online=$(map_version)
SHARDCTL_FAULT_PAUSE=online.cutover:1 "$SHARDCTL_BIN/shardctl" move --map customers --key 100 --to shard_2 \
  --online --cutover-timeout 0.001 >"$TEST_TMP/move.out" 2>&1 &
pid=$!
wait_stopped "$pid" "the move" "$TEST_TMP/move.out"
online_op=$(last_op)
# A new move of the map off shard_1 put the guard's triggers back in place of the light one.
assert_eq "$(guard_triggers 1)" "customers:shardctl_guard/23:A?,customers:shardctl_guard_delete/8:A,customers:shardctl_guard_insert/4:A,\
customers:shardctl_guard_truncate/34:A,customers:shardctl_guard_update/16:A,order_lines:shardctl_guard/23:A?,\
order_lines:shardctl_guard_delete/8:A,order_lines:shardctl_guard_insert/4:A,order_lines:shardctl_guard_truncate/34:A,\
order_lines:shardctl_guard_update/16:A,orders:shardctl_guard/23:A?,orders:shardctl_guard_delete/8:A,\
orders:shardctl_guard_insert/4:A,orders:shardctl_guard_truncate/34:A,orders:shardctl_guard_update/16:A,\
visits:shardctl_guard/31:A,visits:shardctl_guard_truncate/34:A"
refused_as 1 stale_route "set local shardctl.route = 'customers:$v0'" "delete from order_lines where customer_id = 5"
(OUT=$TEST_TMP/rr.out; tx 1 "set transaction isolation level repeatable read" "select count(*) from customers" \
  "update customers set name = 'rr' where customer_id = 101") &
rr_pid=$!
waiting_on_shard() {
  [ "$(psql_shard 1 -XAtc "select count(*) from pg_stat_activity where datname = current_database()
                           and wait_event_type = 'Lock' and wait_event = 'advisory'")" = 1 ]
}
wait_until "the write to wait on the cut-over" waiting_on_shard
kill -CONT "$pid"
got=0
wait "$pid" || got=$?
[ "$got" = 75 ] || fail "the move exited $got, not 75 (its cut-over was to give up): $(cat "$TEST_TMP/move.out")"
wait "$rr_pid" || fail "tx.py failed"
OUT=$TEST_TMP/rr.out
assert_eq "$(outcome) $(second)" "55000 shardctl_moving"
assert_eq "$(detail | jq -c '[.state, .map, .operation, .new_owner, .min_version, .key, .table]')" \
  "[\"moving\",\"customers\",\"$online_op\",\"shard_2\",null,\"101\",\"public.customers\"]"
OUT=$TEST_TMP/tx.out

step "an online move raises the floor too, in its cut-over's flip"
expect_exit 0 shardctl op resume "$online_op" --cutover-timeout 5
v3=$(flip_version "$online_op")
[ "$v3" -gt "$before_online" ] || fail "the online flip version $v3 is not above $before_online"
assert_eq "$(floor_of 1)" "$v3"
refused_as 1 stale_route "set local shardctl.route = 'customers:$before_online'" "delete from order_lines where customer_id = 50"
assert_eq "$(field min_version) $(field operation) $(field new_owner)" "$v3 \"$online_op\" \"shard_2\""
refused_as 1 stale_route "select set_config('shardctl.route', 'customers:$before_online', true)" \
  "insert into orders values (50, 999001, now(), 'new')"
refused_as 1 fenced "set local shardctl.route = 'customers:$v3'" "insert into orders values (50, 999001, now(), 'new')"
assert_eq "$(field min_version) $(field stated_version) $(field new_owner)" "$v3 $v3 \"shard_2\""
tx 1 "select shardctl.assert_route('customers', $before_online)"
assert_eq "$(outcome) $(second)" "55000 shardctl_stale_route"

step "a merge raises the floor of every source"
fresh_fleet floor_merge --shards 3 --scale 1
before_merge=$(map_version)
expect_exit 0 shardctl merge --map customers --range 200..700 --into shard_1 --batch-size 400
merge_op=$(last_op)
for n in 2 3; do
  want=$(psql_catalog -XAtc "select max(b.flip_version) from shardctl.op_batches b join shardctl.shards s
                             on s.shard_id = b.source_shard_id where b.op_id = '$merge_op' and s.name = 'shard_$n'")
  [ -n "$want" ] || fail "no batch of the merge came from shard_$n"
  assert_eq "$(floor_of "$n")" "$want"
  refused_as "$n" stale_route "set local shardctl.route = 'customers:$before_merge'" "delete from order_lines where customer_id = 900"
  assert_eq "$(field operation) $(field new_owner)" "\"$merge_op\" \"shard_1\""
done
assert_eq "$(psql_shard 1 -XAtc "select count(*) from shardctl.route_floors")" "0"
pass
