# A shard whose guard functions came from another shardctl version (their version is the
# comment on shardctl.guard_hit) gets this version's functions when a guard is next installed
# there: the functions are replaced in place, and the fences they enforce refuse writes again.
source "$(dirname "$0")/lib.sh"

fresh_fleet gupgrade --shards 3 --scale 1

# The guard functions' text (md5) and version on shard N.
functions() {
  psql_shard "$1" -XAtc "select md5(string_agg(proname || prosrc, ',' order by proname)) || ' ' ||
                                coalesce(obj_description('shardctl.guard_hit(bigint,text,text)'::regprocedure, 'pg_proc'), '-')
                         from pg_proc where pronamespace = 'shardctl'::regnamespace and proname like 'guard%'"
}
# A statement with the early per-row refusal off, as shardctl's own sessions run it: only the
# statement guard (shardctl.guard_rows) stands between it and a fenced key (FK checks off, as
# in a load, so that the guard is what refuses it).
statement_write="set shardctl.row_guard = off; set session_replication_role = replica; insert into orders values (160, 999001, now(), 'new')"

# Keys 150..334 move from shard_1 to shard_3; shard_1 keeps fences on them.
expect_exit 0 shardctl split --map customers --at 150 --to shard_3 --batch-size 1000
current=$(functions 1)
[[ "$current" == *" shardctl guard "* ]] || fail "the guard functions carry no version: $current"
out=$(psql_shard 1 -v VERBOSITY=verbose -qc "$statement_write" 2>&1) && fail "a fenced key took a write"
assert_contains "$out" "55000"

# Another version's statement guard, which lets every statement through.
psql_shard 1 -qc "create or replace function shardctl.guard_rows() returns trigger language plpgsql security definer
                    as \$f\$ begin return null; end \$f\$;
                  comment on function shardctl.guard_hit(bigint, text, text) is 'shardctl guard 0000000000000000'"
psql_shard 1 -qc "begin; $statement_write; rollback"  # the hole
[ "$(functions 1)" != "$current" ] || fail "the replaced function did not change the fingerprint"

# The next operation that guards shard_1 installs this version's functions.
expect_exit 0 shardctl split --map customers --at 100 --to shard_2 --batch-size 1000
assert_eq "$(functions 1)" "$current"
out=$(psql_shard 1 -v VERBOSITY=verbose -qc "$statement_write" 2>&1) && fail "a fenced key took a write after the upgrade"
assert_contains "$out" "55000"
assert_contains "$out" "has moved to shard shard_3"

# Functions of this version are left alone: no second install.
psql_shard 1 -qc "comment on function shardctl.guard_rows() is 'untouched'"
expect_exit 0 shardctl split --map customers --at 50 --to shard_2 --batch-size 1000
assert_eq "$(psql_shard 1 -XAtc "select obj_description('shardctl.guard_rows()'::regprocedure, 'pg_proc')")" "untouched"
assert_fleet_consistent
pass
