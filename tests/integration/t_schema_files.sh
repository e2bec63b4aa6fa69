# Migration files are checked before any shard is touched, so a file runs as it reads: a NUL
# byte, invalid UTF-8 (in the text or the name), COMMIT in a file, and anything named like a
# migration that is not a regular file inside DIR (a directory, a FIFO, a dangling symbolic link,
# a link to /etc/passwd) are refused with 65 naming the file, and no shard changes. A UTF-8 byte
# order mark is left out of what runs and of the checksum, also for a row an earlier version
# recorded with the mark in it; a symbolic link to a file inside DIR is followed.
# (shardctl-schema(1), "Migration files".)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet schema_files 2
M="$TEST_TMP/migrations"
mig "$M" V1__t.sql <<'SQL'
create table t (id int primary key, v text);
SQL
expect_exit 0 shardctl schema apply "$M"

# The state of both shards: history rows and the public tables; compared after every refusal.
fleet_state() {
  local i
  for i in 1 2; do
    history "$i"
    shard_value "$i" "select string_agg(relname, ',' order by relname) from pg_class where relnamespace = 'public'::regnamespace"
    shard_value "$i" "select count(*) from t"
  done
}
before=$(fleet_state)

# refused FILE MESSAGE: apply (and status) exit 65 with MESSAGE on stderr, and no shard changed.
refused() {
  expect_exit 65 shardctl schema apply "$M"
  expect_stderr_contains "$2"
  assert_eq "$(fleet_state)" "$before"
  expect_exit 65 shardctl schema status "$M"
  expect_stderr_contains "$2"
  rm -rf "${M:?}/$1"
}

# A NUL byte: only the text before it would have reached the server.
printf 'create table a (id int);\ninsert into t values (1);\x00\ncreate table b (id int);\n' > "$M/V2__nul.sql"
refused V2__nul.sql "$M/V2__nul.sql:2:26: a NUL byte; a migration file is text"

# Invalid UTF-8 in the text, and in the file name.
printf "create table a (id int);\ninsert into t values (1, '\xe9t\xe9');\n" > "$M/V2__latin1.sql"
refused V2__latin1.sql "$M/V2__latin1.sql:2:27: not valid UTF-8 (byte 0xE9)"
printf 'create table a (id int);\n' > "$M/$(printf 'V2__caf\xe9.sql')"
refused "$(printf 'V2__caf\xe9.sql')" "$M/V2__caf\\xE9.sql: the file name is not valid UTF-8"

# COMMIT in a transactional file would commit its first statements while history says failed.
mig "$M" V2__commit.sql <<'SQL'
insert into t values (1, 'one');
  commit;
create table t (id int);
SQL
refused V2__commit.sql "$M/V2__commit.sql:2:3: COMMIT: a migration file must not control transactions"
# ... but the word inside a comment, a string, a dollar quote or an identifier is no statement.
mig "$M" V2__words.sql <<'SQL'
-- commit; begin;
create table "commit" (note text default 'rollback; commit');
create function f() returns int language plpgsql as $$ begin return 1; end $$;
SQL

# Named like a migration, not a regular file: refused, never skipped.
mkdir "$M/V5__x.sql"
refused V5__x.sql "$M/V5__x.sql: a directory, not a migration file"
mkfifo "$M/V5__x.sql"
HANG_GUARD=60 expect_exit_guarded 65 shardctl schema apply "$M"  # refused, not read (that would wait for a writer)
expect_stderr_contains "$M/V5__x.sql: a FIFO, not a migration file"
rm "$M/V5__x.sql"
ln -s V4__gone.sql "$M/V5__x.sql"
refused V5__x.sql "$M/V5__x.sql: a symbolic link to 'V4__gone.sql', which does not exist"
ln -s /etc/passwd "$M/V5__x.sql"
refused V5__x.sql "$M/V5__x.sql: a symbolic link to '/etc/passwd', outside the migration directory"
echo "select 1;" > "$M/V5__x.sql.orig"
refused V5__x.sql.orig "$M/V5__x.sql.orig: not a migration file name"

# A byte order mark is not sent, and not in the checksum: same checksum as without it.
printf '\xef\xbb\xbfinsert into t values (2, $$bom$$);\r\n' > "$M/V3__bom.sql"
# A symbolic link to a file inside DIR is followed.
mkdir "$M/shared"
echo "insert into t values (4, 'linked');" > "$M/shared/four.sql"
ln -s shared/four.sql "$M/V4__linked.sql"
expect_exit 0 shardctl schema apply "$M"
for i in 1 2; do
  assert_eq "$(history "$i" | tr '\n' ' ')" "V1__t.sql|t V2__words.sql|t V3__bom.sql|t V4__linked.sql|t "
  assert_eq "$(shard_value "$i" "select string_agg(v, ',' order by id) from t")" "bom,linked"
done
want=$(printf 'insert into t values (2, $$bom$$);\n' | sha256sum | cut -d' ' -f1)
assert_eq "$(shard_value 1 "select checksum from shardctl.schema_history where name = 'V3__bom.sql'")" "sha256:$want"

# A row an earlier version recorded for a file with the mark (checksum over the mark too) is the
# same file, not an edited one.
with_bom=$(printf '\xef\xbb\xbfinsert into t values (2, $$bom$$);\n' | sha256sum | cut -d' ' -f1)
psql_shard 2 -qc "update shardctl.schema_history set checksum = 'sha256:$with_bom' where name = 'V3__bom.sql'"
expect_exit 0 shardctl schema status "$M"
expect_exit 0 shardctl schema apply "$M"
assert_eq "$(history 2 | wc -l)" 4
pass
