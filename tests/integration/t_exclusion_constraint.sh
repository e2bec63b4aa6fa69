# The catalog itself (not only shardctl) refuses overlapping ranges and duplicate points:
# rows written through plain SQL hit the exclusion constraints (ARCHITECTURE.md, "The
# catalog": one GiST exclusion constraint per range column), each refusal by its SQLSTATE and
# the constraint's name, so that no other error (a typo, a missing row) passes for one.
source "$(dirname "$0")/lib.sh"

fresh_fleet excl --empty
shardctl shard add s1 --dsn "dbname=x1" >/dev/null
shardctl shard add s2 --dsn "dbname=x2" >/dev/null
shardctl map create r --kind range --key-type bigint >/dev/null
shardctl map create t --kind range --key-type text >/dev/null
shardctl map create l --kind list --key-type uuid >/dev/null
shardctl map create p --kind list --key-type bigint >/dev/null

# ins MAP COLUMN RANGE IS_POINT: a plain INSERT, as any client could write. Sets ins_rc (psql's
# exit code: 3 when the statement failed, as ON_ERROR_STOP stops the script) and ins_out (with
# VERBOSITY verbose an error reads "ERROR:  SQLSTATE: ..." and names its constraint).
ins() {
  ins_rc=0
  ins_out=$(echo "insert into shardctl.mappings (map_id, shard_id, is_point, $2) values ((select map_id from shardctl.maps where name = :'m'), (select shard_id from shardctl.shards where name = 's1'), $4, $3)" |
    psql_catalog -q -v VERBOSITY=verbose -v m="$1" 2>&1) || ins_rc=$?
}
# accepted CASE MAP COLUMN RANGE IS_POINT: the row goes in.
accepted() {
  local what=$1; shift
  ins "$@"
  [ "$ins_rc" = 0 ] || fail "$what: refused (psql exit $ins_rc): $ins_out"
}
# refused CASE SQLSTATE CONSTRAINT MAP COLUMN RANGE IS_POINT: the statement fails with that
# SQLSTATE (23P01 exclusion_violation, 23514 check_violation), naming that constraint.
refused() {
  local what=$1 state=$2 constraint=$3; shift 3
  ins "$@"
  [ "$ins_rc" != 0 ] || fail "$what: accepted"
  [ "$ins_rc" = 3 ] || fail "$what: want psql exit 3 (the statement failed), got $ins_rc: $ins_out"
  grep -q "^ERROR:  $state: " <<<"$ins_out" || fail "$what: want SQLSTATE $state, got: $ins_out"
  grep -qxF "CONSTRAINT NAME:  $constraint" <<<"$ins_out" || fail "$what: want constraint $constraint, got: $ins_out"
}

accepted "bigint range [0,100)" r int_range "int8range(0, 100)" false
refused "overlapping bigint range" 23P01 mappings_int_no_overlap r int_range "int8range(50, 150)" false
accepted "adjacent bigint range (half-open)" r int_range "int8range(100, 200)" false
refused "unbounded overlap" 23P01 mappings_int_no_overlap r int_range "int8range(NULL, 1)" false

accepted "text range [a,m)" t text_range "shardctl.textrange('a', 'm')" false
refused "overlapping text range" 23P01 mappings_text_no_overlap t text_range "shardctl.textrange('l', 'z')" false
# byte order, not a locale's: 'Z' (0x5a) sorts before 'a' (0x61), so [Z, a) does not overlap.
accepted "text range [Z,a) in byte order" t text_range "shardctl.textrange('Z', 'a')" false

u=0b1e7c53-8f7e-4bd5-9d51-3b7e0e3d2a11
accepted "uuid point" l uuid_range "shardctl.uuidrange('$u', '$u', '[]')" true
refused "duplicate uuid point" 23P01 mappings_uuid_no_overlap l uuid_range "shardctl.uuidrange('$u', '$u', '[]')" true

accepted "bigint point 7" p int_range "int8range(7, 7, '[]')" true
refused "duplicate bigint point" 23P01 mappings_int_no_overlap p int_range "int8range(7, 7, '[]')" true
# Another map may use the same key space.
accepted "another map's range over a point of map p" r int_range "int8range(1000, 2000)" false
accepted "another map's point inside a range of map r" p int_range "int8range(1500, 1500, '[]')" true
# A mapping must have exactly one range column, and no empty range (CHECK constraints of
# lib/catalog/schema.cpp, named by PostgreSQL: TABLE_COLUMN_check, or TABLE_check for several
# columns).
refused "empty range" 23514 mappings_int_range_check r int_range "'empty'::int8range" false
refused "no range column" 23514 mappings_check r int_range "NULL" false
refused "two range columns" 23514 mappings_check r "int_range, text_range" "int8range(5000, 6000), shardctl.textrange('a', 'b')" false
pass
