# shardctl query runs reads only: as a role that can only read ([query] user; a login that can
# do more is refused with 64 unless --allow-privileged), only a statement the server parses as
# a read (anything else: 64, before any shard runs it), read-only and rolled back. Each hostile
# statement man/shardctl-query.1 names (WHAT IS AND IS NOT PREVENTED) is tried as the read role
# and its effect looked for: a file COPY or lo_export would write, a server file read, a large
# object imported, a replication slot, a session of another role cancelled or killed, a sequence
# advanced, a connection through dblink or postgres_fdw, a table either would create, an
# advisory lock left behind.
source "$(dirname "$0")/lib.sh"

fresh_fleet query_ro
read_role=shardctl_read  # made by `sandbox up` on the fixture's clusters
printf '[query]\nuser = "%s"\n' "$read_role" > "$TEST_TMP/shardctl.toml"
: > "$TEST_TMP/admin.toml"  # no [query] user: the DSN's own, postgres, a superuser
admin() { shardctl -c "$TEST_TMP/admin.toml" "$@"; }
# Where a shard's server (user postgres) could write, were a statement allowed to.
mkdir -m 777 "$TEST_TMP/srv"
customers=$(psql_shard 1 -XAtc "select count(*) from customers")
accepted="SELECT, WITH, VALUES, TABLE, SHOW or EXPLAIN"
# Roles made for this test (cluster-wide: unique names, dropped when it passes).
u=$$
roles="qr_super_$u qr_member_$u qr_signal_$u qr_mixed_$u qr_app_$u"
on_shard_clusters() { for port in 6401 6402; do psql -X -q -v ON_ERROR_STOP=1 "host=$SANDBOX_RUN port=$port user=postgres dbname=postgres" -c "$1"; done; }

# 1. The read role answers like any other.
expect_exit 0 shardctl query "select current_user as u, count(*) as n from customers" --format csv
assert_eq "$(tail -n +2 "$STDOUT" | cut -d, -f2 | sort -u)" "$read_role"
assert_eq "$(grep '^shard_1,' "$STDOUT" | cut -d, -f3)" "$customers"

# 2. A login that can do more than read is refused on every shard before anything runs: one
# error line, the hint, nothing on stdout; --allow-privileged runs as it.
slot="shardctl_q_slot_$u"
expect_exit 64 admin query "select pg_create_physical_replication_slot('$slot', true)"
assert_eq "$(cat "$STDERR")" 'shardctl query: error: shard shard_1: role "postgres" can do more than read (superuser)
hint: set [query] user in the config to a login role that can only read, e.g. CREATE ROLE shardctl_read LOGIN; GRANT pg_read_all_data TO shardctl_read (see shardctl-query(1)); or pass --allow-privileged'
[ ! -s "$STDOUT" ] || fail "a refused run wrote rows: $(cat "$STDOUT")"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from pg_replication_slots where slot_name = '$slot'")" 0
expect_exit 0 admin query --allow-privileged "select current_user as u" --format csv
assert_eq "$(tail -n +2 "$STDOUT" | sort | tr '\n' ' ')" "shard_1,postgres shard_2,postgres shard_3,postgres shard_4,postgres "

# Membership counts, inherited or not (set_config('role', ...) switches to any role the login
# is a member of), as do REPLICATION and the predefined roles that reach past the database.
on_shard_clusters "create role qr_super_$u superuser nologin; create role qr_member_$u login noinherit in role qr_super_$u;
                   create role qr_signal_$u login replication in role pg_signal_backend, pg_read_all_data"
printf '[query]\nuser = "qr_member_%s"\n' "$u" > "$TEST_TMP/member.toml"
expect_exit 64 shardctl -c "$TEST_TMP/member.toml" query "select set_config('role', 'qr_super_$u', true)"
expect_stderr_contains "error: shard shard_1: role \"qr_member_$u\" can do more than read (member of superuser \"qr_super_$u\")"
printf '[query]\nuser = "qr_signal_%s"\n' "$u" > "$TEST_TMP/signal.toml"
expect_exit 64 shardctl -c "$TEST_TMP/signal.toml" query "select 1"
expect_stderr_contains "role \"qr_signal_$u\" can do more than read (REPLICATION, member of pg_signal_backend)"

# A role privileged on one cluster only: the shards of the other answer, their rows are
# written, and the refusal is the exit status (64) and the one error line.
on_shard_clusters "create role qr_mixed_$u login in role pg_read_all_data"
psql -X -q -v ON_ERROR_STOP=1 "host=$SANDBOX_RUN port=6401 user=postgres dbname=postgres" -c "alter role qr_mixed_$u superuser"
printf '[query]\nuser = "qr_mixed_%s"\n' "$u" > "$TEST_TMP/mixed.toml"
expect_exit 64 shardctl -c "$TEST_TMP/mixed.toml" query "select 1 as one" --format csv
assert_eq "$(tail -n +2 "$STDOUT" | sort | tr '\n' ' ')" "shard_2,1 shard_4,1 "
assert_eq "$(cat "$STDERR" | head -1)" "shardctl query: error: shard shard_1: role \"qr_mixed_$u\" can do more than read (superuser)"
assert_eq "$(wc -l < "$STDERR")" 2

# 3. The issue's statements, as the read role.
# COPY TO PROGRAM and COPY TO a file: refused by their first word, before any shard is asked
# (--allow-privileged does not let them through).
for sql in "copy (select 1) to program 'touch $TEST_TMP/srv/program'" "copy (select 1) to '$TEST_TMP/srv/file'"; do
  expect_exit 64 shardctl query "$sql"
  assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement begins with COPY, not with $accepted"
  expect_exit 64 admin query --allow-privileged "$sql"
done
[ ! -e "$TEST_TMP/srv/program" ] && [ ! -e "$TEST_TMP/srv/file" ] || fail "a COPY wrote on the server: $(ls "$TEST_TMP/srv")"

# A replication slot that would hold WAL forever: the role may not make one (the shards'
# own refusal: exit 3, every shard failed).
expect_exit 3 shardctl query "select pg_create_physical_replication_slot('$slot', true)"
expect_stderr_contains "must be superuser or replication role to use replication slots"
expect_stderr_contains "partial result: 4 of 4 shard(s) failed"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from pg_replication_slots where slot_name = '$slot'")" 0
assert_eq "$(psql_shard 2 -XAtc "select count(*) from pg_replication_slots where slot_name = '$slot'")" 0

# Sessions of an ordinary role the read role is no member of: neither cancelled nor terminated.
# The victim waits on an advisory lock a holder keeps, so a cancel would end its statement.
victim="victim_$u"
holder="holder_$u"
on_shard_clusters "create role qr_app_$u login"
session_open "$holder" "$(shard_dsn 1)"
session_send "$holder" "select pg_advisory_lock(4242);"
wait_until "the holder's advisory lock" sql_true "$(shard_dsn 1)" \
  "select exists (select from pg_locks l join pg_stat_activity a using (pid) where a.application_name = '$holder'
                  and l.locktype = 'advisory' and l.granted)"
session_open "$victim" "$(shard_dsn 1) user=qr_app_$u"
session_send "$victim" "select pg_advisory_lock(4242); select 'victim ' || 'went on' as v;"
wait_until "the victim waiting on the holder's lock" sql_true "$(shard_dsn 1)" \
  "select exists (select from pg_stat_activity where application_name = '$victim' and usename = 'qr_app_$u'
                  and wait_event_type = 'Lock' and wait_event = 'advisory')"
victim_pid=$(session_pid "$victim")
expect_exit 3 shardctl query "select pg_cancel_backend(pid) from pg_stat_activity where application_name = '$victim'" --shards shard_1
assert_eq "$(head -1 "$STDERR")" "shardctl query: shard shard_1 failed: must be a member of the role whose query is being canceled or member of pg_signal_backend"
expect_exit 3 shardctl query "select pg_terminate_backend(pid) from pg_stat_activity where application_name = '$victim'" --shards shard_1
assert_eq "$(head -1 "$STDERR")" "shardctl query: shard shard_1 failed: must be a member of the role whose process is being terminated or member of pg_signal_backend"
# Still the same backend, still in its statement; once the lock is free it goes on.
assert_eq "$(psql_shard 1 -XAtc "select pid || ' ' || wait_event from pg_stat_activity where application_name = '$victim'")" "$victim_pid advisory"
session_close "$holder"
victim_went_on() { grep -q "victim went on" "$TEST_TMP/session.$victim.out"; }
wait_until "the victim's statement to finish" victim_went_on
! grep -E "ERROR|FATAL|terminat|cancel" "$TEST_TMP/session.$victim.out" || fail "the victim session was hit: $(cat "$TEST_TMP/session.$victim.out")"
assert_eq "$(session_pid "$victim")" "$victim_pid"
session_close "$victim"

# Server files: not read, not written; large objects neither imported nor exported (the
# functions are not granted to the role).
psql_shard 1 -XAtc "select lo_from_bytea(0, 'large object of shard_1')" > "$TEST_TMP/lo_oid"
lo=$(cat "$TEST_TMP/lo_oid")
largeobjects=$(psql_shard 1 -XAtc "select count(*) from pg_largeobject_metadata")
for f in "pg_read_file('postgresql.conf')" "pg_read_binary_file('postgresql.conf')" "lo_import('/etc/hostname')" \
         "lo_export($lo, '$TEST_TMP/srv/lo_export')"; do
  expect_exit 3 shardctl query "select $f" --shards shard_1,shard_2
  expect_stderr_contains "shardctl query: shard shard_1 failed: permission denied for function ${f%%(*}"
  expect_stderr_contains "shardctl query: shard shard_2 failed: permission denied for function ${f%%(*}"
  expect_stderr_contains "partial result: 2 of 2 shard(s) failed"
done
assert_eq "$(psql_shard 1 -XAtc "select count(*) from pg_largeobject_metadata")" "$largeobjects"
[ ! -e "$TEST_TMP/srv/lo_export" ] || fail "lo_export wrote a server file"

# A sequence: the role may not use it (it reads every table, nothing more); granted USAGE and UPDATE, the
# read-only transaction still stops nextval and setval. Its value is as it was.
psql_shard 1 -qc "create sequence qr_seq"
expect_exit 3 shardctl query "select nextval('qr_seq')" --shards shard_1
assert_eq "$(head -1 "$STDERR")" "shardctl query: shard shard_1 failed: permission denied for sequence qr_seq"
psql_shard 1 -qc "grant usage, update on sequence qr_seq to $read_role"
expect_exit 3 shardctl query "select nextval('qr_seq')" --shards shard_1
assert_eq "$(head -1 "$STDERR")" "shardctl query: shard shard_1 failed: cannot execute nextval() in a read-only transaction"
expect_exit 3 shardctl query "select setval('qr_seq', 1000)" --shards shard_1
assert_eq "$(head -1 "$STDERR")" "shardctl query: shard shard_1 failed: cannot execute setval() in a read-only transaction"
assert_eq "$(psql_shard 1 -XAtc "select last_value || ' ' || is_called from qr_seq")" "1 false"

# postgres_fdw: the role cannot make an extension, a server or a user mapping (no read), and
# through a foreign table an administrator made, with a user mapping without a password, it
# cannot connect (PostgreSQL requires a password of a non-superuser); the administrator can.
for sql in "create extension postgres_fdw" "create server qr_fdw foreign data wrapper postgres_fdw" \
           "create user mapping for current_user server qr_fdw" "import foreign schema public from server qr_fdw into public"; do
  expect_exit 64 shardctl query "$sql"
  assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement begins with $(first=${sql%% *}; echo "${first^^}"), not with $accepted"
done
psql_shard 1 -q <<SQL
create extension postgres_fdw;
select format('create server qr_fdw foreign data wrapper postgres_fdw options (host %L, port %L, dbname %L)',
              split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'), current_database())
\\gexec
create user mapping for public server qr_fdw options (user 'postgres');
create foreign table qr_remote (customer_id bigint) server qr_fdw options (table_name 'customers');
SQL
assert_eq "$(psql_shard 1 -XAtc "select count(*) from qr_remote")" "$customers"
expect_exit 3 shardctl query "select count(*) from qr_remote" --shards shard_1
assert_eq "$(head -1 "$STDERR")" "shardctl query: shard shard_1 failed: password is required"
[ -z "$(tail -n +2 "$STDOUT")" ] || fail "the foreign table answered the read role: $(cat "$STDOUT")"
expect_exit 3 shardctl query "select count(*) from qr_remote where customer_id in (select customer_id from customers)" --shards shard_1
expect_stderr_contains "password is required"

# Advisory locks the statement took go with its session: none is left.
expect_exit 0 shardctl query "select pg_advisory_lock(4343) is null as locked" --shards shard_1
assert_eq "$(psql_shard 1 -XAtc "select count(*) from pg_locks where locktype = 'advisory' and objid = 4343")" "0"

# set_config('role', ...) back to a superuser: the read role is a member of none.
expect_exit 3 shardctl query "select set_config('role', 'postgres', true)"
expect_stderr_contains 'permission denied to set role "postgres"'

# dblink_exec writes through a second session: a non-superuser may not connect without a
# password, so the table is never made.
psql_shard 1 -qc "create extension dblink"
expect_exit 3 shardctl query "select dblink_exec('$(shard_dsn 1)', 'create table dblink_wrote (x int)')" --shards shard_1
expect_stderr_contains "password is required"
assert_eq "$(psql_shard 1 -XAtc "select to_regclass('public.dblink_wrote') is null")" "t"

# 4. Statements the server does not take as one read: 64, never 3, nothing on stdout.
expect_exit 64 shardctl query "select * from customers where"
assert_eq "$(head -1 "$STDERR")" 'shardctl query: error: the statement does not parse: syntax error at end of input'
[ ! -s "$STDOUT" ] || fail "a refused statement wrote output: $(cat "$STDOUT")"
expect_exit 64 shardctl query "with d as (delete from customers returning 1) select count(*) from d"
assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement modifies data (its WITH holds an INSERT, UPDATE, DELETE or MERGE), not a read"
expect_exit 64 shardctl query "select * into copied from customers"
assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement is a SELECT INTO, which creates a table, not a read"
# EXPLAIN ANALYZE executes: CREATE TABLE AS runs in a read-only transaction, so only a select
# may be explained.
expect_exit 64 shardctl query "explain analyze create table copied as select 1"
assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement is an EXPLAIN of CREATE, not of a SELECT, WITH, VALUES or TABLE statement"
expect_exit 64 shardctl query "explain (analyze, format json) with d as (delete from customers returning 1) table d"
expect_stderr_contains "error: the statement EXPLAIN explains modifies data"
expect_exit 64 shardctl query "select \$1::int as x"
expect_stderr_contains "error: the statement has parameters"
for sql in "delete from customers" "do \$\$ begin delete from customers; end \$\$" "call nothing()" \
           "create table copied (x int)" "set role postgres"; do
  expect_exit 64 shardctl query "$sql"
  expect_stderr_contains "error: the statement begins with "
done

# Hostile text: a second statement after ';', transaction control, statements behind
# comments, a NUL byte; a byte order mark is only dropped.
touch_sql="copy (select 1) to program 'touch $TEST_TMP/srv/program'"
expect_exit 64 shardctl query "select 1; $touch_sql"
assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement does not parse: cannot insert multiple commands into a prepared statement"
expect_exit 64 shardctl query "commit; $touch_sql"
assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement begins with COMMIT, not with $accepted"
expect_exit 64 shardctl query "select 1; commit; $touch_sql"
expect_exit 64 shardctl query "/* select */ -- select
$touch_sql"
assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement begins with COPY, not with $accepted"
[ ! -e "$TEST_TMP/srv/program" ] || fail "a hidden COPY ran a program on the server"
expect_exit 0 shardctl query "select 1 as one -- ; $touch_sql" --format csv
assert_eq "$(tail -n +2 "$STDOUT" | wc -l)" 4
printf 'select 1\0; delete from customers' > "$TEST_TMP/nul.sql"
expect_exit 64 shardctl query - < "$TEST_TMP/nul.sql"
assert_eq "$(head -1 "$STDERR")" "shardctl query: error: the statement holds a NUL byte"
printf '\xef\xbb\xbfselect 2 as two' > "$TEST_TMP/bom.sql"
expect_exit 0 shardctl query - --format csv --shards shard_3 < "$TEST_TMP/bom.sql"
assert_eq "$(cat "$STDOUT" | tr '\n' ' ')" "shard,two shard_3,2 "

# 5. Reads that are not plain SELECTs still run.
expect_exit 0 shardctl query "show transaction_read_only" --format csv --shards shard_1
assert_eq "$(tail -1 "$STDOUT")" "shard_1,on"
expect_exit 0 shardctl query "explain (analyze, costs off, timing off, summary off) select count(*) from customers" --shards shard_2
expect_stdout_contains "Aggregate (actual rows=1 loops=1)"
expect_exit 0 shardctl query "/* n */ (values (1)) union all values (2)" --format csv --limit 1 --shards shard_4
assert_eq "$(tail -n +2 "$STDOUT")" "shard_4,1"

# Nothing any of it tried is left.
assert_eq "$(psql_shard 1 -XAtc "select count(*) from customers")" "$customers"
for i in 1 2 3 4; do
  assert_eq "$(psql_shard "$i" -XAtc "select to_regclass('public.copied') is null and to_regclass('public.dblink_wrote') is null")" "t"
done
[ -z "$(ls "$TEST_TMP/srv")" ] || fail "files written on the server: $(ls "$TEST_TMP/srv")"

for r in $roles; do on_shard_clusters "drop role if exists $r"; done
pass
