# table sync-reference makes every shard's copy of the reference tables identical to the
# source's by changing only the rows of differing chunks, one transaction per shard, in
# foreign-key order, and verifies the digests before it commits (man/shardctl-table.1):
# --dry-run changes nothing; a copy that still differs after its changes is rolled back (a
# trigger alters the rows the sync writes: 70, the shard unchanged); held at a shard's commit
# (SHARDCTL_FAULT_PAUSE=references.sync.commit@SHARD, lib/refdata/sync.cpp), the shard's
# copies are all locked by one backend in one transaction and another session still sees them
# unchanged, and every row it wrote carries that transaction's id; a reference row that
# sharded rows still reference is never deleted (64, nothing changes on that shard); a table
# without a primary key only with --allow-no-pk; copies without a majority need a named
# source; an unreachable shard is skipped and named (69).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/refs_lib.sh"

# A failing test leaves no stopped sync behind: it holds locks and snapshots.
sync=""
trap 'status=$?; [ -z "$sync" ] || kill -KILL "$sync" 2>/dev/null; (exit "$status"); _drop_made_databases' EXIT

refs_fleet sync_refs
good=$(refs_fingerprint 1)
refs_damage
# shard_2 also holds an extra product that one of its order lines (a sharded row) references.
psql_shard 2 -q <<'SQL'
insert into product select 201, 'extra', 1, 1;
insert into order_lines select customer_id, order_id, 99, 201, 1, 1 from orders order by 1, 2 limit 1;
SQL
ref_line=$(psql_shard 2 -XAtc "select (customer_id, order_id, line_no)::text from order_lines where product_id = 201")
damaged=$(refs_all_fingerprints)

step "a row sharded rows still reference is never deleted: 64, nothing changes on that shard"
expect_exit 64 shardctl table sync-reference product
expect_stderr_contains "refused on shard_2: rows of public.product that are not on the source shard_1 are still referenced by public.order_lines through foreign key \"order_lines_product_id_fkey\" (for example $ref_line); nothing was deleted"
assert_eq "$(refs_all_fingerprints)" "$damaged"
psql_shard 2 -qc "delete from order_lines where product_id = 201"
damaged=$(refs_all_fingerprints)

step "--dry-run says per shard what it would change, and changes nothing"
expect_exit 0 shardctl table sync-reference --dry-run --allow-no-pk --format json
assert_eq "$(jq -c '[.dry_run, [.shards[] | .shard as $s | .tables[] | [$s, .table, (.inserted | length), (.updated | length), (.deleted | length), .replaced]]]' "$STDOUT")" '[true,[["shard_2","public.product",0,0,1,false],["shard_2","public.ref_country",0,0,1,false],["shard_2","public.ref_city",0,0,1,false],["shard_2","public.ref_site",1,2,0,false],["shard_3","public.ref_city",0,1,0,false],["shard_3","public.ref_note",100,0,100,true]]]'
assert_eq "$(jq -c '[.shards[] | .tables[] | select(.table == "public.ref_site") | .inserted, .updated]' "$STDOUT")" '[["(17)"],["(1000)","(5)"]]'
expect_exit 0 shardctl table sync-reference ref_site --dry-run
expect_stdout_contains "shard_2: public.ref_site from shard_1: would insert 1, update 2, delete 0"
expect_stdout_contains "  would update: (1000) (5)"
assert_eq "$(refs_all_fingerprints)" "$damaged"

step "verified before its commit: a copy that still differs after its changes is rolled back (70), the shard unchanged"
# A trigger on shard_2's copy of ref_site alters every row the sync writes there, so the copy
# cannot match the source's digests; a sequence, which no rollback resets, counts those writes.
psql_shard 2 -q <<'SQL'
create sequence ref_site_written;
create function ref_site_alter() returns trigger language plpgsql as $$
begin
  perform nextval('ref_site_written');
  new.note := coalesce(new.note, '') || ' (altered on shard_2)';
  return new;
end $$;
create trigger ref_site_alter before insert or update on ref_site for each row execute function ref_site_alter();
SQL
expect_exit 70 shardctl table sync-reference ref_site
expect_stderr_contains "the copy of public.ref_site on shard_2 still differs from the source after the sync; it was rolled back"
# Written (17 inserted, then 17, 5 and 1000 updated: the update phase finds 17 altered), then
# rolled back: shard_2 is as it was.
assert_eq "$(psql_shard 2 -XAtc "select last_value from ref_site_written")" 4
assert_eq "$(refs_all_fingerprints)" "$damaged"
psql_shard 2 -qc "drop trigger ref_site_alter on ref_site; drop function ref_site_alter(); drop sequence ref_site_written"

step "without a primary key only with --allow-no-pk: shard_3 refused (64), shard_2 synced in one transaction"
SHARDCTL_FAULT_PAUSE=references.sync.commit@shard_2 "$SHARDCTL_BIN/shardctl" table sync-reference >"$STDOUT" 2>"$STDERR" &
sync=$!
wait_stopped "$sync" "the sync" "$STDERR"
# Held just before shard_2's commit, its changes made and verified: another session still sees
# shard_2's copies as they were (reads go on), and one backend holds every copy the sync
# compares there locked (EXCLUSIVE), in one transaction that has written.
assert_eq "$(refs_fingerprint 2)" "$(echo "$damaged" | cut -d'|' -f2)"
held=$(psql_shard 2 -XAtc "select count(distinct l.pid), count(*), string_agg(distinct a.backend_xid::text, ' ')
  from pg_locks l join pg_stat_activity a using (pid)
  where l.locktype = 'relation' and l.mode = 'ExclusiveLock' and l.granted
    and l.database = (select oid from pg_database where datname = current_database())
    and l.relation in ('product'::regclass, 'region'::regclass, 'ref_country'::regclass, 'ref_city'::regclass,
                       'ref_site'::regclass, 'ref_note'::regclass)")
xid=${held##*|}
assert_eq "$held" "1|6|$xid"
[ -n "$xid" ] || fail "the sync's transaction on shard_2 has no transaction id"
kill -CONT "$sync"
rc=0
wait "$sync" || rc=$?
sync=""
[ "$rc" = 64 ] || { cat "$STDOUT" "$STDERR" >&2; fail "expected exit 64, got $rc"; }
expect_stderr_contains "refused on shard_3: public.ref_note has no primary key and its copy differs from the source shard_1; pass --allow-no-pk to replace the whole table"
expect_stdout_contains "shard_2: public.ref_site from shard_1: inserted 1, updated 2, deleted 0"
assert_eq "$(refs_fingerprint 2)" "$good"
[ "$(refs_fingerprint 3)" = "$(echo "$damaged" | cut -d'|' -f3)" ] || fail "shard_3 changed although refused"
# Every row shard_2's sync wrote (ref_site's 17 inserted, 5 and 1000 updated; the rest were
# deletions) is that one transaction's, and nothing else is.
assert_eq "$(psql_shard 2 -XAtc "select string_agg(t || ':' || k, ' ' order by t, k) from (
    select 'ref_site' t, site_id::text k, xmin from ref_site union all select 'ref_city', country || city_no, xmin from ref_city
    union all select 'ref_country', code, xmin from ref_country union all select 'product', product_id::text, xmin from product
    union all select 'region', region_id::text, xmin from region union all select 'ref_note', line, xmin from ref_note) r
  where xmin::text = '$xid'")" "ref_site:1000 ref_site:17 ref_site:5"

step "with --allow-no-pk every copy is the source's, and check is clean"
expect_exit 0 shardctl table sync-reference --allow-no-pk
expect_stdout_contains "shard_3: public.ref_note from shard_1: replaced whole (no primary key), inserted 100, updated 0, deleted 100"
assert_eq "$(refs_all_fingerprints)" "$good|$good|$good"
expect_exit 0 shardctl check --references
expect_exit 0 shardctl table sync-reference --format json
assert_eq "$(jq -c '[.shards[].tables[]]' "$STDOUT")" '[]'

step "a tie needs a source: 64 and nothing changes; --from names one"
for i in 1 2; do psql_shard "$i" -qc "update ref_note set n = $i where line = 'note 7'"; done
psql_shard 3 -qc "update ref_note set n = 5 where line = 'note 7'"
tied=$(refs_all_fingerprints)
expect_exit 64 shardctl table sync-reference ref_note --allow-no-pk
expect_stderr_contains "the copies of public.ref_note have no majority (shard_1 against shard_2 against shard_3) and no source is named"
assert_eq "$(refs_all_fingerprints)" "$tied"
expect_exit 0 shardctl table sync-reference ref_note --allow-no-pk --from shard_2
assert_eq "$(refs_fingerprint 1)" "$(refs_fingerprint 2)"
assert_eq "$(refs_fingerprint 3)" "$(refs_fingerprint 2)"

step "a source outside the fleet (--source-dsn): compared with, synced from; never a password"
outside="refs_outside_$$"
psql -X -q "$CATALOG_CLUSTER dbname=postgres" -c "create database \"$outside\""
outside_dsn="$CATALOG_CLUSTER dbname=$outside"
echo "$outside_dsn" >> "$MADE_DATABASES"
psql -X -q "$outside_dsn" -c "create table ref_country (code text primary key, name text not null)"
psql_shard 1 -XAtc "copy ref_country to stdout" | psql -X -q "$outside_dsn" -c "copy ref_country from stdin"
psql -X -q "$outside_dsn" -c "insert into ref_country values ('NEW', 'only outside'); update ref_country set name = 'outside' where code = 'C1'"
expect_exit 64 shardctl table set ref_country --source-dsn "$outside_dsn password=hunter2"
expect_stderr_contains "the source DSN of public.ref_country"
! grep -q hunter2 "$STDERR" || fail "password printed"
expect_exit 64 shardctl table set ref_country --source shard_1 --source-dsn "$outside_dsn"
expect_stderr_contains "is one shard or one database, not both"
expect_exit 0 shardctl table set ref_country --source-dsn "$outside_dsn"
expect_exit 2 shardctl check --references --format json
assert_eq "$(jq -c '[.findings[] | [.shard, .table, .count, (.samples | join(" "))]] | sort' "$STDOUT")" '[["shard_1","public.ref_country",2,"missing (NEW) changed (C1)"],["shard_2","public.ref_country",2,"missing (NEW) changed (C1)"],["shard_3","public.ref_country",2,"missing (NEW) changed (C1)"]]'
assert_contains "$(jq -r '.findings[0].object' "$STDOUT")" "source outside the fleet ("
assert_contains "$(jq -r '.findings[0].object' "$STDOUT")" "dbname=$outside "
expect_exit 0 shardctl table sync-reference ref_country
expect_stdout_contains "shard_3: public.ref_country from outside the fleet ("
expect_exit 0 shardctl check --references
country() { psql -X -At "$1" -c "select count(*), sum(hashtextextended(x::text, 0)::numeric) from ref_country x"; }
assert_eq "$(country "$(shard_dsn 2)")" "$(country "$outside_dsn")"
expect_exit 0 shardctl table set ref_country --source shard_1

step "a bigint key: range chunks; missing, extra and changed rows at both ends and in the middle synced"
# 200k rows: some 200 chunks, whose bounds are sampled on the source (TABLESAMPLE) and bound.
for i in 1 2 3; do psql_shard "$i" -q <<'SQL'
create table ref_big (id bigint primary key, v text not null);
insert into ref_big select g * 10, 'v' || g from generate_series(1, 200000) g;
-- No parallel scan of it: each process of one counts a seq_scan of its own.
alter table ref_big set (parallel_workers = 0);
analyze ref_big;
SQL
done
expect_exit 0 shardctl table add-reference ref_big --source shard_1
psql_shard 2 -qc "delete from ref_big where id in (10, 1000000); insert into ref_big values (99999990, 'above');
  update ref_big set v = 'changed' where id in (20, 2000000)"
psql_shard 3 -qc "insert into ref_big values (5, 'below'); delete from ref_big where id = 2000000; update ref_big set v = 'x' where id = 500000"
big() { psql_shard "$1" -XAtc "select count(*), sum(hashtextextended(x::text, 0)::numeric) from ref_big x"; }
damaged="$(big 2)|$(big 3)"
[ "$damaged" != "$(big 1)|$(big 1)" ] || fail "ref_big not damaged"
# The source's scans: twice per target and run (whole digest, chunk digests; its bounds come
# from a TABLESAMPLE); its rows of the differing chunks are copied through the index.
source_scans() { psql_shard 1 -XAtc "select seq_scan from pg_stat_user_tables where relid = 'ref_big'::regclass"; }
wait_until "the shards' sessions ended" refs_idle
scanned=$(source_scans)
expect_exit 0 shardctl table sync-reference ref_big --dry-run --format json
assert_eq "$(jq -c '[.shards[] | .shard as $s | .tables[] | [$s, .inserted, .updated, .deleted]]' "$STDOUT")" '[["shard_2",["(10)","(1000000)"],["(20)","(2000000)"],["(99999990)"]],["shard_3",["(2000000)"],["(500000)"],["(5)"]]]'
assert_eq "$(big 2)|$(big 3)" "$damaged"
expect_exit 0 shardctl table sync-reference ref_big
expect_stdout_contains "shard_2: public.ref_big from shard_1: inserted 2, updated 2, deleted 1"
expect_stdout_contains "shard_3: public.ref_big from shard_1: inserted 1, updated 1, deleted 1"
wait_until "the syncs' sessions ended" refs_idle
assert_eq "$(($(source_scans) - scanned))" 8
assert_eq "$(big 2)" "$(big 1)"
assert_eq "$(big 3)" "$(big 1)"
expect_exit 0 shardctl check --references
expect_exit 0 shardctl table remove ref_big

step "an unreachable shard: the others are synced, exit 69 names it"
psql_shard 2 -qc "update ref_site set note = 'x' where site_id = 9"
mkdir -p "$TEST_TMP/nosock"
expect_exit 0 shardctl shard add shard_4 --dsn "host=$TEST_TMP/nosock port=1 dbname=x"
expect_exit 69 shardctl table sync-reference ref_site
expect_stderr_contains "could not sync the reference tables on shard_4; the other shards were synced"
expect_stdout_contains "shard_2: public.ref_site from shard_1: inserted 0, updated 1, deleted 0"
assert_eq "$(refs_fingerprint 2)" "$(refs_fingerprint 1)"
pass
