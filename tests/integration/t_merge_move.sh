# merge and move through the binary: a merge from two source shards into one, the move of a
# whole range mapping, of a hash map's mapping, of list-map points (text keys whose neighbours
# must stay), the free-disk precondition, and bad input refused before anything changes.
source "$(dirname "$0")/lib.sh"

fresh_fleet merge --shards 3 --scale 1
before=$(fleet_fingerprint)
mappings() {
  shardctl mapping list --map "$1" --format json | jq -r '.mappings | map((.range // .point) + ">" + .shard) | join(" ")'
}
assert_eq "$(mappings customers)" "..334>shard_1 334..667>shard_2 667..>shard_3"

# --- merge -----------------------------------------------------------------------------------
dump=$(catalog_dump)
expect_exit 0 shardctl merge --map customers --range 200..700 --into shard_1 --batch-size 100 --dry-run
expect_stdout_contains "merge plan for map customers"
expect_stdout_contains "move keys 334..667 from shard_2 to shard_1"
expect_stdout_contains "move keys 667..700 from shard_3 to shard_1"
expect_stdout_contains "estimated size:"
expect_exit 0 shardctl merge --map customers --range 200..700 --into shard_1 --batch-size 100 --dry-run --format json
assert_eq "$(jq -r '[.segments[].source] | join(",")' "$STDOUT")" "shard_2,shard_3"
assert_eq "$(jq -r '.batches | length' "$STDOUT")" "5"
# 333 keys from shard_2 in batches of 100, 100, 100, 33; 33 keys from shard_3 in one.
assert_eq "$(jq -r '[.batches[].keys] | map(tostring) | join(",")' "$STDOUT")" "100,100,100,33,33"
assert_eq "$(jq -r .keys_total "$STDOUT")" "366"
assert_eq "$(catalog_dump)" "$dump"

# Bad input: each refused before anything changes.
expect_exit 64 shardctl merge --map customers --range 700..200 --into shard_1
expect_stderr_contains "empty range"
expect_exit 64 shardctl merge --map customers --range 10..300 --into shard_1
expect_stderr_contains "nothing to merge"
expect_exit 64 shardctl merge --map customers --range 200..700 --into nosuch
expect_exit 64 shardctl merge --map customers --range 2x..700 --into shard_1
expect_exit 64 shardctl merge --map customers --range 200..700 --into shard_1 --batch-size 0
SHARDCTL_ASSUME_FREE_BYTES=1000 expect_exit 64 shardctl merge --map customers --range 200..700 --into shard_1
expect_stderr_contains "target shard shard_1 has 1 MB free"
expect_stderr_contains "free space on shard_1 or choose another target shard"
psql_shard 1 -qc "insert into customers values (500, 'squatter', 1, now())"
expect_exit 64 shardctl merge --map customers --range 200..700 --into shard_1
expect_stderr_contains "the target range 334..667 of public.customers is not empty on shard_1"
psql_shard 1 -qc "delete from customers where customer_id = 500"
assert_eq "$(catalog_dump)" "$dump"

# The merge itself: two sources, one target, one mapping at the end.
expect_exit 0 shardctl merge --map customers --range 200..700 --into shard_1 --batch-size 100
expect_stdout_contains "done"
assert_eq "$(mappings customers)" "..700>shard_1 700..>shard_3"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"
op=$(last_op)
expect_exit 0 shardctl op show "$op" --format json
assert_eq "$(jq -r .kind "$STDOUT")" "merge"
assert_eq "$(jq -r .source "$STDOUT")" "shard_2,shard_3"
assert_eq "$(jq -r .batches_done "$STDOUT")" "5"
assert_eq "$(jq -r '"\(.keys_done)/\(.keys_total)"' "$STDOUT")" "366/366"
assert_eq "$(jq -r '.rows_moved == .rows_total and .rows_total > 366' "$STDOUT")" "true"

# --- move of a range mapping -----------------------------------------------------------------
expect_exit 64 shardctl move --map customers --key 900 --to shard_3
expect_stderr_contains "already holds"
expect_exit 64 shardctl move --map customers --key x9 --to shard_2
shardctl shard set shard_2 --status offline >/dev/null
expect_exit 64 shardctl move --map customers --key 900 --to shard_2
expect_stderr_contains "target shard shard_2 is offline"
shardctl shard set shard_2 --status online >/dev/null
expect_exit 0 shardctl move --map customers --key 900 --to shard_2 --batch-size 150 --format json
assert_eq "$(jq -r .status "$STDOUT")" "done"
assert_eq "$(jq -r .kind "$STDOUT")" "move"
assert_eq "$(mappings customers)" "..700>shard_1 700..>shard_2"
assert_fleet_consistent
assert_eq "$(fleet_fingerprint)" "$before"

# --- a hash map: move the mapping that holds a key's hash ------------------------------------
for i in 1 2 3; do
  # The expression index batch filters of a hash map need (the precheck refuses without it).
  psql_shard "$i" -qc "create table events (tenant_id bigint, seq int, body text, primary key (tenant_id, seq));
                       create index on events ((hashint8extended(tenant_id, 0)))"
done
shardctl map create events --kind hash --key-type bigint >/dev/null
shardctl mapping add --map events --range ..0 --shard shard_1 >/dev/null
shardctl mapping add --map events --range 0.. --shard shard_2 >/dev/null
shardctl table add-sharded public.events --map events --key tenant_id >/dev/null
# Rows where the map routes them: the server's own hash decides.
psql_shard 1 -qc "insert into events select t, s, 'e' || t || '/' || s from generate_series(1, 400) t, generate_series(1, 3) s
                  where hashint8extended(t, 0) < 0"
psql_shard 2 -qc "insert into events select t, s, 'e' || t || '/' || s from generate_series(1, 400) t, generate_series(1, 3) s
                  where hashint8extended(t, 0) >= 0"
ev_total() { local n=0 i; for i in 1 2 3; do n=$((n + $(psql_shard "$i" -XAtc "select count(*) from events"))); done; echo $n; }
assert_eq "$(ev_total)" "1200"
key=$(psql_shard 2 -XAtc "select tenant_id from events order by tenant_id limit 1")
on_2=$(psql_shard 2 -XAtc "select md5(string_agg(e::text, ',' order by tenant_id, seq)) from events e")
expect_exit 0 shardctl move --map events --key "$key" --to shard_3 --batch-size 50
assert_eq "$(mappings events)" "..0>shard_1 0..>shard_3"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from events")" "0"
assert_eq "$(psql_shard 3 -XAtc "select md5(string_agg(e::text, ',' order by tenant_id, seq)) from events e")" "$on_2"
assert_eq "$(ev_total)" "1200"
psql_shard 3 -XAtc "select tenant_id from events" | shardctl lookup --map events - | awk -F'\t' '$2 != "shard_3"' > "$TEST_TMP/wrong"
[ ! -s "$TEST_TMP/wrong" ] || fail "rows on shard_3 routed elsewhere: $(head -3 "$TEST_TMP/wrong")"

# --- a list map with text keys: one point moves, its byte-order neighbours stay ---------------
for i in 1 2 3; do
  psql_shard "$i" -qc "create table notes (tenant text, n int, primary key (tenant, n))"
done
shardctl map create tenants --kind list --key-type text >/dev/null
for t in acme acme2 acmf; do shardctl mapping add --map tenants --point "$t" --shard shard_1 >/dev/null; done
shardctl mapping add --map tenants --point globex --shard shard_2 >/dev/null
shardctl table add-sharded public.notes --map tenants --key tenant >/dev/null
psql_shard 1 -qc "insert into notes select t, n from unnest(array['acme', 'acme2', 'acmf']) t, generate_series(1, 10) n"
psql_shard 2 -qc "insert into notes select 'globex', n from generate_series(1, 10) n"
expect_exit 0 shardctl move --map tenants --key acme --to shard_3 --dry-run
expect_stdout_contains "move key acme from shard_1 to shard_3"
expect_exit 64 shardctl move --map tenants --key nosuch --to shard_3
expect_stderr_contains "not mapped"
expect_exit 0 shardctl move --map tenants --key acme --to shard_3
assert_eq "$(mappings tenants)" "acme>shard_3 acme2>shard_1 acmf>shard_1 globex>shard_2"
assert_eq "$(psql_shard 3 -XAtc "select tenant || ':' || count(*) from notes group by tenant")" "acme:10"
assert_eq "$(psql_shard 1 -XAtc "select string_agg(tenant || ':' || c, ' ' order by tenant) from (select tenant, count(*) c from notes group by tenant) x")" "acme2:10 acmf:10"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.mappings where status <> 'online'")" "0"
# A point move that is killed and resumed finishes like any other operation.
SHARDCTL_FAULT=copy.commit expect_exit 99 shardctl move --map tenants --key globex --to shard_1
expect_exit 0 shardctl op resume "$(last_op)"
assert_eq "$(mappings tenants)" "acme>shard_3 acme2>shard_1 acmf>shard_1 globex>shard_1"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from notes")" "30"
assert_eq "$(psql_shard 2 -XAtc "select count(*) from notes")" "0"
assert_eq "$(fleet_fingerprint)" "$before"
pass
