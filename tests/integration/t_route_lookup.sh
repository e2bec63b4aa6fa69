# shardctl.route() on the catalog answers as `shardctl lookup` does: 100,000 random keys of each
# key type (int, bigint, text, uuid) through a list, a range and a hash map of that type, with
# every bound and its neighbours, the type's limits, unmapped keys and offline mappings. The
# keys are made on the server, routed there in one statement, and fed to `lookup --map M -`;
# every line must agree. Then route() refuses what lookup refuses (man/shardctl-lookup.1,
# man/shardctl-init.1).
source "$(dirname "$0")/lib.sh"

fresh_fleet route_lookup --empty
for s in a b c d; do shardctl shard add $s --dsn "host=/nonexistent dbname=$s" >/dev/null 2>&1; done
N=${ROUTE_LOOKUP_KEYS:-100000}
sql() { psql_catalog -XAtq "$@"; }

# The keys of one type, in table keys_TYPE (ord, k), made on the server.
sql -c "create table keys_int as
          select g as ord, (floor(random() * 4294967296) - 2147483648)::bigint::text as k from generate_series(1, $N) g"
sql -c "create table keys_bigint as
          select g as ord, ((random() * 2 - 1) * 9.2e18)::bigint::text as k from generate_series(1, $N) g"
# Text: 0-8 characters from ASCII, '.', space, 2-, 3- and 4-byte UTF-8.
sql -c "create table keys_text as
          select g as ord, coalesce((select string_agg(substr('abmnzAZ09 ..-éß日本😀', 1 + floor(random() * 19)::int, 1), '')
                                       from generate_series(1, floor(random() * 9)::int) where g > 0), '') as k
            from generate_series(1, $N) g"
sql -c "create table keys_uuid as
          select g as ord, case when g % 10 = 0 then upper(gen_random_uuid()::text) else gen_random_uuid()::text end as k
            from generate_series(1, $N) g"
# Extra keys: limits and bounds, each with its neighbours.
extra() { # TYPE KEY...
  local t=$1; shift
  # (psql interpolates :'k' in its input, not in -c)
  for k in "$@"; do echo "insert into keys_$t select (select max(ord) + 1 from keys_$t), :'k';" | sql -v k="$k"; done
}
extra int -2147483648 -2147483647 2147483647 2147483646 -1 0 1 -1000001 -1000000 -999999 999999 1000000 1000001 41 42 43 99 100 101
extra bigint -9223372036854775808 -9223372036854775807 9223372036854775807 9223372036854775806 -1 0 1 \
  4999999999 5000000000 5000000001 41 42 43 -2147483649 2147483648
extra text "" a "a " b m "m..y" "m..z" "m..z " "m..{" n "n " é "é " ê 日 日本 "😀" "..."
extra uuid 00000000-0000-0000-0000-000000000000 ffffffff-ffff-ffff-ffff-ffffffffffff \
  3fffffff-ffff-ffff-ffff-ffffffffffff 40000000-0000-0000-0000-000000000000 40000000-0000-0000-0000-000000000001 \
  7fffffff-ffff-ffff-ffff-ffffffffffff 80000000-0000-0000-0000-000000000000 {80000000-0000-0000-0000-000000000001} \
  C0000000-0000-0000-0000-000000000000

# Maps: list (points from the keys), range (bounds above, a gap), hash (bounds at keys' hashes, a gap).
for t in int bigint text uuid; do
  shardctl map create "l_$t" --kind list --key-type $t >/dev/null
  shardctl map create "r_$t" --kind range --key-type $t >/dev/null
  shardctl map create "h_$t" --kind hash --key-type $t >/dev/null
  i=0
  while IFS= read -r k; do
    shardctl mapping add --map "l_$t" --point "$k" --shard "$(echo a b c d | cut -d' ' -f$((i % 4 + 1)))" >/dev/null
    i=$((i + 1))
  done < <(sql -c "select distinct k from keys_$t where ord % 10000 = 1 or ord > $N order by k")
  # Hash bounds: the hashes of four keys (the keys themselves are among those routed).
  hashes=($(sql -c "select distinct r.hash from (select k from keys_$t where ord <= 50) x, lateral shardctl.route('h_$t', k) r
                     order by 1 limit 4"))
  [ ${#hashes[@]} = 4 ] || fail "expected 4 hashes for $t: ${hashes[*]}"
  shardctl mapping add --map "h_$t" --range "..${hashes[0]}" --shard a >/dev/null
  shardctl mapping add --map "h_$t" --range "${hashes[0]}..${hashes[1]}" --shard b >/dev/null
  shardctl mapping add --map "h_$t" --range "${hashes[2]}..${hashes[3]}" --shard c >/dev/null
  shardctl mapping add --map "h_$t" --range "${hashes[3]}.." --shard d >/dev/null
done
r() { shardctl mapping add --map "$1" --range "$2" --shard "$3" >/dev/null; }
r r_int ..-1000000 a; r r_int -1000000..0 b; r r_int 0..42 c; r r_int 100..1000000 d; r r_int 1000000.. a
r r_bigint ..-2147483649 a; r r_bigint -2147483649..0 b; r r_bigint 0..42 c; r r_bigint 100..5000000000 d; r r_bigint 5000000000.. a
r r_text ..a a; r r_text "a..m..z" b; r r_text "n..é" c; r r_text "é..日" d; r r_text "日.." a   # gap: [m..z, n)
r r_uuid ..40000000-0000-0000-0000-000000000000 a
r r_uuid 40000000-0000-0000-0000-000000000000..80000000-0000-0000-0000-000000000000 b
r r_uuid c0000000-0000-0000-0000-000000000000.. c                                        # gap: [8..., c...)
# Offline mappings (being moved) route as online ones do: a third of each map's.
sql -c "update shardctl.mappings set status = 'offline' where mapping_id % 3 = 0"

start=$(date +%s.%N)
routed=0
for t in int bigint text uuid; do
  sql -c "select k from keys_$t order by ord" > "$TEST_TMP/keys_$t"
  for kind in l r h; do
    m=${kind}_$t
    step "$m"
    sql -F $'\t' -c "select k, coalesce(r.shard, '-') from keys_$t, lateral shardctl.route('$m', k) r order by ord" > "$TEST_TMP/route_$m"
    shardctl lookup --map "$m" - < "$TEST_TMP/keys_$t" > "$TEST_TMP/lookup_$m" 2>/dev/null
    [ "$(wc -l < "$TEST_TMP/route_$m")" -gt "$N" ] || fail "route() gave $(wc -l < "$TEST_TMP/route_$m") lines for $m"
    if ! cmp -s "$TEST_TMP/route_$m" "$TEST_TMP/lookup_$m"; then
      diff "$TEST_TMP/route_$m" "$TEST_TMP/lookup_$m" | head -10 >&2
      fail "route() and lookup disagree on map $m"
    fi
    # Every kind of answer was exercised: mapped keys, and unmapped ones where the map has gaps.
    [ "$(cut -f2 "$TEST_TMP/route_$m" | sort -u | grep -vc -- '^-$')" -ge 2 ] || fail "map $m routed to fewer than 2 shards"
    grep -q $'\t-$' "$TEST_TMP/route_$m" || fail "map $m left no key unmapped"
    routed=$((routed + $(wc -l < "$TEST_TMP/route_$m")))
  done
done
TEST_STEP=
echo "routed $routed keys through route() and lookup in $(echo "$(date +%s.%N) - $start" | bc) s" >&2

# The JSON answer of lookup gives route()'s bounds, status, version and dsn.
step "json agrees with route() on bounds"
for m in l_text r_text h_bigint r_uuid; do
  t=${m#*_}
  sql -c "select k from keys_$t where ord % 997 = 0 or ord > $N order by ord" > "$TEST_TMP/few"
  shardctl lookup --map "$m" --format json - < "$TEST_TMP/few" 2>/dev/null |
    jq -r '.results[] | [.key, (.shard // "-"), .status, (if .is_point == null then "-" else (.is_point | tostring) end), (.low // "-"), (.high // "-"), (.version | tostring)] | @tsv' \
    > "$TEST_TMP/json_$m"
  sql -F $'\t' -c "select k, coalesce(r.shard, '-'), r.status, coalesce(r.is_point::text, '-'), coalesce(r.low, '-'),
                          coalesce(r.high, '-'), r.version
                     from (select ord, k from keys_$t where ord % 997 = 0 or ord > $N) x, lateral shardctl.route('$m', k) r order by ord" > "$TEST_TMP/sqljson_$m"
  cmp -s "$TEST_TMP/sqljson_$m" "$TEST_TMP/json_$m" || { diff "$TEST_TMP/sqljson_$m" "$TEST_TMP/json_$m" | head >&2; fail "lookup's JSON and route() differ on $m"; }
done

# route() refuses what lookup refuses, naming the key type.
step "refusals"
refused() { # SQLSTATE WORD SQL
  local out
  out=$(psql_catalog -XAtq -v VERBOSITY=verbose -c "$3" 2>&1) && fail "route() accepted: $3"
  assert_contains "$out" "$1"
  assert_contains "$out" "$2"
}
for k in "+42" " 42" "42 " "4.2" "99999999999" "" "0x10" "١٢"; do
  refused 22P02 "valid int key" "select * from shardctl.route('r_int', '$k')"
  expect_exit 64 shardctl lookup --map r_int -- "$k"
done
for k in "+42" "9223372036854775808" "-9223372036854775809"; do
  refused 22P02 "valid bigint key" "select * from shardctl.route('r_bigint', '$k')"
  expect_exit 64 shardctl lookup --map r_bigint -- "$k"
done
for k in "not-a-uuid" "40000000-0000-0000-0000-00000000000" "40000000-0000-0000-0000-0000000000000" "g0000000-0000-0000-0000-000000000000"; do
  refused 22P02 "valid uuid key" "select * from shardctl.route('h_uuid', '$k')"
  expect_exit 64 shardctl lookup --map h_uuid -- "$k"
done
refused 22004 "key type int" "select * from shardctl.route('r_int', null::text)"
refused 22004 "key type uuid" "select * from shardctl.route('l_uuid', null::uuid)"
refused 22004 "map name is NULL" "select * from shardctl.route(null, '1')"
refused 42704 "unknown map 'nosuch'" "select * from shardctl.route('nosuch', '1')"
expect_exit 64 shardctl lookup --map nosuch 1
pass
