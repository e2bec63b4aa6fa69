# Text keys in collations that are not byte-wise are routed by their bytes everywhere.
# A hash map over a column in a nondeterministic ICU collation: the server's
# hashtextextended(k, 0) would hash the collation's sort key, not the bytes the client hashes,
# so shardctl hashes k COLLATE "C". check --strays finds none where lookup put every row, and
# exactly the one planted stray, which --fix rehome moves where lookup routes it; a move of a
# hash range is not refused for a "non-empty" target, asks for the index on
# (hashtextextended(k COLLATE "C", 0)) first, and leaves every row where lookup routes it; the
# source's fence refuses a write exactly when lookup routes the key to the new shard. A range
# map over columns in an ICU collation (deterministic, and nondeterministic) where 'a' < 'B'
# but not in bytes: check and a split agree with lookup too.
source "$(dirname "$0")/lib.sh"

fresh_fleet collation_keys --shards 3
if [ "$(psql_shard 1 -XAtc "select count(*) from pg_collation where collname = 'und-x-icu' and collprovider = 'i'")" != 1 ]; then
  skip "the server has no ICU collations (PostgreSQL built without ICU), so nothing here can run"
fi
for i in 1 2 3; do
  psql_shard "$i" -q <<'SQL'
create collation ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
create table hk (k text collate ci primary key, v int not null);
create table rk (k text collate "und-x-icu" primary key, v int not null);
create table rk_ci (k text collate ci primary key, v int not null);
create index on rk ((k collate "C"));
create index on rk_ci ((k collate "C"));
SQL
done
# What makes the test bite: the collation hashes and orders otherwise than bytes.
[ "$(psql_shard 1 -XAtc "select hashtextextended('Acme' collate ci, 0) <> hashtextextended('Acme' collate \"C\", 0)
                         and 'a' < 'B' collate \"und-x-icu\" and 'a' < 'B' collate ci and 'B' < 'a' collate \"C\"")" = t ] ||
  fail "the ICU collations here hash or order like bytes: the test would prove nothing"

# load TABLE MAP KEYS_FILE: inserts every key on the shard lookup routes it to.
load() {
  shardctl lookup --map "$2" - < "$3" > "$TEST_TMP/routes"
  for i in 1 2 3; do
    values=$(awk -F'\t' -v s="shard_$i" '$2 == s {printf "%s(\x27%s\x27, %d)", (n++ ? "," : ""), $1, NR}' "$TEST_TMP/routes")
    [ -z "$values" ] || psql_shard "$i" -qc "insert into $1 values $values"
  done
}
# where_lookup_routes TABLE MAP: every row of TABLE sits on the shard lookup routes its key to.
where_lookup_routes() {
  local i placed
  placed=$(for i in 1 2 3; do psql_shard "$i" -XAtc "select k || E'\t' || 'shard_$i' from $1"; done | LC_ALL=C sort)
  assert_eq "$(cut -f1 <<<"$placed" | shardctl lookup --map "$2" - | LC_ALL=C sort)" "$placed"
}

# Hash map, four buckets over shard_1 and shard_2; mixed-case keys.
shardctl map create h --kind hash --key-type text --shards shard_1,shard_2,shard_1,shard_2 >/dev/null
shardctl table add-sharded public.hk --map h --key k >/dev/null
for n in $(seq 1 200); do echo "Tenant-$n"; done > "$TEST_TMP/hkeys"
load hk h "$TEST_TMP/hkeys"
# Range map: byte order puts every upper-case key before 'm', ICU order does not.
shardctl map create r --kind range --key-type text >/dev/null
shardctl mapping add --map r --range ..m --shard shard_1 >/dev/null
shardctl mapping add --map r --range m.. --shard shard_2 >/dev/null
shardctl table add-sharded public.rk --map r --key k >/dev/null
shardctl table add-sharded public.rk_ci --map r --key k >/dev/null
for c in a B c M n Z d Y x; do for n in 1 2 3 4 5; do echo "$c$n"; done; done > "$TEST_TMP/rkeys"
load rk r "$TEST_TMP/rkeys"
load rk_ci r "$TEST_TMP/rkeys"
[ "$(psql_shard 1 -XAtc "select count(*) from rk where k collate \"und-x-icu\" >= 'm'")" -gt 0 ] ||
  fail "no key of shard_1 sorts after 'm' in the column's collation: the range case would prove nothing"

step "check finds no stray where lookup put every row"
expect_exit 0 shardctl check --strays --format json
assert_eq "$(jq -c '[.findings[] | [.table, .count]]' "$STDOUT")" "[]"

step "check finds exactly the planted strays, rehome moves them where lookup routes them"
# One real stray of each map, on shard_3 (which the maps route nothing to): check reports
# exactly those, and --fix rehome moves them where lookup routes them, and nothing else.
psql_shard 3 -qc "insert into hk values ('Stray-Tenant', 0); insert into rk values ('Zz', 0)"
expect_exit 2 shardctl check --strays --format json
assert_eq "$(jq -c '[.findings[] | [.shard, .table, .count, .samples]] | sort' "$STDOUT")" \
  '[["shard_3","public.hk",1,["Stray-Tenant"]],["shard_3","public.rk",1,["Zz"]]]'
expect_exit 2 shardctl check --strays --fix rehome --dry-run --format json
assert_eq "$(jq -c '[.fixes[] | [.shard, .table, .target, .rows]] | sort' "$STDOUT")" \
  "[[\"shard_3\",\"public.hk\",\"$(shardctl lookup --map h Stray-Tenant | cut -f2)\",1],[\"shard_3\",\"public.rk\",\"shard_1\",1]]"
expect_exit 0 shardctl check --strays --fix rehome --format json
assert_eq "$(jq -r '[.fixes[] | .rows] | add' "$STDOUT")" "2"
expect_exit 0 shardctl check --strays
echo Stray-Tenant >> "$TEST_TMP/hkeys"
where_lookup_routes hk h
where_lookup_routes rk r
where_lookup_routes rk_ci r

step "a move of a hash range asks for the index on the bytes' hash, then leaves every row where lookup routes it"
# Move the hash bucket of one key of shard_1 to shard_2, which holds the other buckets' rows.
key=$(shardctl lookup --map h - < "$TEST_TMP/hkeys" | awk -F'\t' '$2 == "shard_1" && !found {print $1; found = 1}')
# Without an index on the hash of the key's bytes the precheck refuses, naming it.
dump=$(catalog_dump)
expect_exit 64 shardctl move --map h --key "$key" --to shard_2
expect_stderr_contains 'no index on shard_1 serves the batch filter of public.hk'
expect_stderr_contains 'CREATE INDEX ON "public"."hk" ((hashtextextended("k" COLLATE "C", 0)))'
[ "$(grep -c 'is not empty' "$STDERR")" = 0 ] || fail "the target range was found not empty: $(cat "$STDERR")"
assert_eq "$(catalog_dump)" "$dump"
for i in 1 2 3; do psql_shard "$i" -qc 'CREATE INDEX ON "public"."hk" ((hashtextextended("k" COLLATE "C", 0)))'; done
for n in $(seq 300 339); do echo "Writer-$n"; done > "$TEST_TMP/wkeys"
shardctl lookup --map h - < "$TEST_TMP/wkeys" > "$TEST_TMP/wbefore"
expect_exit 0 shardctl move --map h --key "$key" --to shard_2 --batch-size 20
where_lookup_routes hk h
total=0; for i in 1 2 3; do total=$((total + $(psql_shard "$i" -XAtc "select count(*) from hk"))); done
assert_eq "$total" "201"
expect_exit 0 shardctl check --strays

step "the fence refuses a write exactly when lookup routes the key to the new shard"
# The fence on shard_1 refuses a write exactly when lookup now routes the key to shard_2 and
# routed it to shard_1 before the move; every other write to shard_1 goes through.
shardctl lookup --map h - < "$TEST_TMP/wkeys" > "$TEST_TMP/wafter"
refused=0
while IFS=$'\t' read -r k before; do
  after=$(awk -F'\t' -v k="$k" '$1 == k {print $2}' "$TEST_TMP/wafter")
  want=0; [ "$before/$after" = shard_1/shard_2 ] && want=1 && refused=$((refused + 1))
  got=0; psql_shard 1 -q -c "begin" -c "insert into hk values ('$k', 1)" -c "rollback" >/dev/null 2>"$STDERR" || got=$?
  assert_eq "$k: exit $got" "$k: exit $want"
  [ "$want" = 0 ] || expect_stderr_contains "key $k of public.hk has moved to shard shard_2"
done < "$TEST_TMP/wbefore"
[ "$refused" -gt 0 ] || fail "no writer key fell in the moved bucket: the fence case proved nothing"

step "a split of the range map moves the keys of the byte range, not the collation's"
# Split the range map inside the ..m mapping: the rows of [a, m) in byte order go to shard_3.
expect_exit 0 shardctl split --map r --at a --to shard_3 --batch-size 10
where_lookup_routes rk r
where_lookup_routes rk_ci r
assert_eq "$(psql_shard 3 -XAtc "select string_agg(k, ' ' order by k collate \"C\") from rk")" \
  "a1 a2 a3 a4 a5 c1 c2 c3 c4 c5 d1 d2 d3 d4 d5"
expect_exit 0 shardctl check --strays
pass
