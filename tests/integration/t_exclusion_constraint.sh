# The catalog itself (not only shardctl) refuses overlapping ranges and duplicate points:
# rows written through plain SQL hit the exclusion constraints.
source "$(dirname "$0")/lib.sh"

fresh_fleet excl --empty
shardctl shard add s1 --dsn "dbname=x1" >/dev/null
shardctl shard add s2 --dsn "dbname=x2" >/dev/null
shardctl map create r --kind range --key-type bigint >/dev/null
shardctl map create t --kind range --key-type text >/dev/null
shardctl map create l --kind list --key-type uuid >/dev/null
shardctl map create p --kind list --key-type bigint >/dev/null

ins() {  # map, column, range expression, is_point: a plain INSERT, as any client could write
  echo "insert into shardctl.mappings (map_id, shard_id, is_point, $2) values ((select map_id from shardctl.maps where name = :'m'), (select shard_id from shardctl.shards where name = 's1'), $4, $3)" |
    psql_catalog -q -v m="$1" 2>&1
}

ins r int_range "int8range(0, 100)" false >/dev/null
out=$(ins r int_range "int8range(50, 150)" false) && fail "overlapping bigint range accepted: $out"
assert_contains "$out" "mappings_int_no_overlap"
ins r int_range "int8range(100, 200)" false >/dev/null   # adjacent is fine: half-open
out=$(ins r int_range "int8range(NULL, 1)" false) && fail "unbounded overlap accepted"

ins t text_range "shardctl.textrange('a', 'm')" false >/dev/null
out=$(ins t text_range "shardctl.textrange('l', 'z')" false) && fail "overlapping text range accepted"
assert_contains "$out" "mappings_text_no_overlap"
# byte order, not a locale's: 'Z' (0x5a) sorts before 'a' (0x61), so [Z, a) does not overlap.
ins t text_range "shardctl.textrange('Z', 'a')" false >/dev/null

u=0b1e7c53-8f7e-4bd5-9d51-3b7e0e3d2a11
ins l uuid_range "shardctl.uuidrange('$u', '$u', '[]')" true >/dev/null
out=$(ins l uuid_range "shardctl.uuidrange('$u', '$u', '[]')" true) && fail "duplicate uuid point accepted"
assert_contains "$out" "mappings_uuid_no_overlap"

ins p int_range "int8range(7, 7, '[]')" true >/dev/null
out=$(ins p int_range "int8range(7, 7, '[]')" true) && fail "duplicate bigint point accepted"
# Another map may use the same key space.
ins r int_range "int8range(1000, 2000)" false >/dev/null
ins p int_range "int8range(1500, 1500, '[]')" true >/dev/null
# A mapping must have exactly one range column, and no empty range.
out=$(ins r int_range "'empty'::int8range" false) && fail "empty range accepted"
pass
