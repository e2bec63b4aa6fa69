# lookup routes every key type through list, range and hash maps, for arguments and for a
# stream on stdin; hash maps agree with the server's own hash functions.
source "$(dirname "$0")/lib.sh"

fresh_fleet look --empty
for s in a b c d; do shardctl shard add $s --dsn "dbname=$s" >/dev/null; done

# Range, bigint: edges are half-open.
shardctl map create r --kind range --key-type bigint >/dev/null
shardctl mapping add --map r --range ..0 --shard a >/dev/null
shardctl mapping add --map r --range 0..1000 --shard b >/dev/null
shardctl mapping add --map r --range 2000.. --shard c >/dev/null
expect_exit 0 shardctl lookup --map r -- -9223372036854775808 -1 0 999 1000 1999 2000 9223372036854775807
assert_eq "$(cut -f2 "$STDOUT" | tr '\n' ' ')" "a a b b - - c c "
expect_stderr_contains "2 key(s) are not mapped"
expect_exit 0 shardctl lookup --map r 5 1500 --format json
assert_eq "$(jq -r '.results | map(.key + ":" + (.shard // "null") + ":" + .status) | join(" ")' "$STDOUT")" \
  "5:b:online 1500:null:unmapped"

# Range, int: 32-bit keys; out-of-range is a bad key.
shardctl map create i --kind range --key-type int >/dev/null
shardctl mapping add --map i --range ..2147483647 --shard d >/dev/null
expect_exit 0 shardctl lookup --map i -- -2147483648 2147483646
assert_eq "$(cut -f2 "$STDOUT" | tr '\n' ' ')" "d d "
expect_exit 64 shardctl lookup --map i 2147483648

# Range, text: byte order (C collation), so 'Z' < 'a' and 'é' sorts after 'z'.
shardctl map create t --kind range --key-type text >/dev/null
shardctl mapping add --map t --range ..a --shard a >/dev/null
shardctl mapping add --map t --range a..n --shard b >/dev/null
shardctl mapping add --map t --range n.. --shard c >/dev/null
expect_exit 0 shardctl lookup --map t Zebra apple mango nectar zoo é ""
assert_eq "$(cut -f2 "$STDOUT" | tr '\n' ' ')" "a b b c c c a "

# List, uuid: any spelling PostgreSQL accepts routes to the same point.
shardctl map create u --kind list --key-type uuid >/dev/null
shardctl mapping add --map u --point a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 --shard d >/dev/null
expect_exit 0 shardctl lookup --map u A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11 "{a0eebc999c0b4ef8bb6d6bb9bd380a11}" \
  00000000-0000-0000-0000-000000000000
assert_eq "$(cut -f2 "$STDOUT" | tr '\n' ' ')" "d d - "

# Stream: same answers as arguments, keys echoed as given.
shardctl map create l --kind list --key-type bigint >/dev/null
for k in 1 2 3; do shardctl mapping add --map l --point $k --shard b >/dev/null; done
printf '1\n2\n3\n4\r\n' | shardctl lookup --map l - > "$TEST_TMP/stream.out"
assert_eq "$(tr '\t\n' ':,' < "$TEST_TMP/stream.out")" "1:b,2:b,3:b,4:-,"
printf '1\n2' | shardctl lookup --map l - --format json > "$TEST_TMP/stream.json"
assert_eq "$(jq -r '.results | map(.shard) | join(",")' "$TEST_TMP/stream.json")" "b,b"
# A closed pipe ends the stream quietly.
set +o pipefail
seq 1 200000 | shardctl lookup --map r - 2>"$TEST_TMP/head.err" | head -1 > "$TEST_TMP/head.out"
status=("${PIPESTATUS[@]}")
set -o pipefail
assert_eq "${status[1]}" "0"
assert_eq "$(cat "$TEST_TMP/head.err")" ""
assert_eq "$(cat "$TEST_TMP/head.out")" "$(printf '1\tb')"

# Hash maps of every key type: the shard lookup prints is the one the server's own hash
# function routes to, over the same mappings.
shardctl table add-reference dummy >/dev/null  # (catalog stays usable with other objects)
gen_keys() {
  case $1 in
    int) psql_catalog -tAc "select (random()*4294967295 - 2147483648)::bigint::int from generate_series(1,2000) union all select unnest(array[0,1,-1,2147483647,-2147483648])" ;;
    bigint) psql_catalog -tAc "select (random()*1.8e19 - 9e18)::numeric(20,0) from generate_series(1,2000) union all select unnest(array[0,1,-1,9223372036854775807,-9223372036854775808])" ;;
    text) psql_catalog -tAc "select md5(i::text) || repeat('é', i % 5) from generate_series(1,2000) i union all select 'x'" ;;
    uuid) psql_catalog -tAc "select gen_random_uuid() from generate_series(1,2000)" ;;
  esac
}
for kt in int bigint text uuid; do
  shardctl map create "h_$kt" --kind hash --key-type $kt --shards a,b,c,d >/dev/null
  gen_keys $kt > "$TEST_TMP/keys_$kt"
  shardctl lookup --map "h_$kt" - < "$TEST_TMP/keys_$kt" > "$TEST_TMP/client_$kt"
  case $kt in int) fn="hashint4extended(k::int, 0)";; bigint) fn="hashint8extended(k::bigint, 0)";;
              text) fn="hashtextextended(k, 0)";; uuid) fn="uuid_hash_extended(k::uuid, 0)";; esac
  psql_catalog -v ON_ERROR_STOP=1 -qtA -F $'\t' > "$TEST_TMP/server_$kt" <<SQL
create temp table keys (n bigserial, k text);
\copy keys (k) from '$TEST_TMP/keys_$kt'
select k.k, s.name from keys k
  join shardctl.mappings m on m.map_id = (select map_id from shardctl.maps where name = 'h_$kt')
   and m.int_range @> $fn
  join shardctl.shards s using (shard_id)
order by k.n;
SQL
  n=$(wc -l < "$TEST_TMP/keys_$kt")
  [ "$n" -ge 2000 ] || fail "too few keys for $kt: $n"
  diff "$TEST_TMP/client_$kt" "$TEST_TMP/server_$kt" > "$TEST_TMP/diff_$kt" ||
    fail "hash routing of $kt keys differs from the server: $(head -5 "$TEST_TMP/diff_$kt")"
done
pass
