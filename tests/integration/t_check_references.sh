# check --references compares every shard's copy of each reference table with the source of
# truth chunk by chunk (man/shardctl-check.1, REFERENCE TABLES): a named source shard, else the
# majority; missing, extra and changed rows per shard; no primary key compared by whole-row
# digest; other columns are drift, never compared; copies without a majority are a tie; an
# unreachable shard makes the run UNKNOWN (3). Text, JSON, Nagios and Prometheus.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/refs_lib.sh"

refs_fleet check_refs

step "identical copies: no finding, exit 0, also in a plain check"
expect_exit 0 shardctl check --references --format json
assert_eq "$(jq -c '[.checks, .findings]' "$STDOUT")" '[["reference_differs","reference_tie","reference_drift"],[]]'
expect_exit 0 shardctl check

step "missing, extra and changed rows, found per shard and table"
refs_damage
before=$(refs_all_fingerprints)
expect_exit 2 shardctl check --references --format json
assert_eq "$(jq -r '.status + " " + (.exit_code | tostring)' "$STDOUT")" "critical 2"
assert_eq "$(jq -c '[.findings[] | [.kind, .severity, .shard, .table, .count]] | sort' "$STDOUT")" '[["reference_differs","critical","shard_2","public.ref_city",1],["reference_differs","critical","shard_2","public.ref_country",1],["reference_differs","critical","shard_2","public.ref_site",3],["reference_differs","critical","shard_3","public.ref_city",1],["reference_differs","critical","shard_3","public.ref_note",2]]'
finding() { jq -r --arg s "$1" --arg t "$2" ".findings[] | select(.shard == \$s and .table == \$t) | $3" "$STDOUT"; }
assert_eq "$(finding shard_2 public.ref_site '.samples | join(" ")')" "missing (17) changed (1000) changed (5)"
assert_eq "$(finding shard_2 public.ref_site .object)" "source shard_1"
detail=$(finding shard_2 public.ref_site .detail)
[[ "$detail" =~ ^[0-9]+\ of\ [0-9]+\ chunk\(s\)\ differ\ from\ shard_1:\ 1\ missing,\ 0\ extra,\ 2\ changed\ row\(s\)\; ]] ||
  fail "detail: $detail"
assert_eq "$(finding shard_2 public.ref_country '.samples | join(" ")')" "extra (ZZ)"
assert_eq "$(finding shard_2 public.ref_city '.samples | join(" ")')" "extra (ZZ,1)"
assert_eq "$(finding shard_3 public.ref_city '.samples | join(" ")')" "changed (C2,1)"
assert_eq "$(finding shard_3 public.ref_note .object)" "source shard_1 (majority of 3 copies)"
assert_contains "$(finding shard_3 public.ref_note .detail)" ": 1 missing, 1 extra, 0 changed row(s); no primary key: rows compared by their whole-row digest"
assert_eq "$(jq -r '.summary.reference_differs' "$STDOUT")" 8
assert_eq "$(refs_all_fingerprints)" "$before"  # a check changes nothing

step "a copy whose whole digest matches is never cut into chunks: only the source and the differing copy are"
# ref_country differs on shard_2 only: its scans there are the whole digest, the chunk digests
# and the rows of the differing chunks; on shard_1, the named source, the chunk digests (in
# place of its whole digest) and the rows; on shard_3 one, the whole digest. ref_note differs
# on shard_3, and its source is the majority, shard_1, known once every whole digest is in:
# three scans there and on shard_3, one on shard_2. (pg_stat_user_tables: a session's scans are
# counted by the time it has left pg_stat_activity, refs_lib.sh's refs_idle: counted once no
# session but the asking one is left, the earlier checks' before the counters are read.)
# stat_counters EXPR TABLE...: pg_stat_user_tables' EXPR of each TABLE on shards 1-3, one line.
stat_counters() {
  local expr=$1 i t
  shift
  for t in "$@"; do
    for i in 1 2 3; do psql_shard "$i" -XAtc "select $expr from pg_stat_user_tables where relid = '$t'::regclass"; done
  done | paste -sd' '
}
# counters_since BEFORE EXPR TABLE...: how much each of stat_counters' numbers grew since BEFORE.
counters_since() {
  local a b i out=()
  read -ra a <<<"$1"
  shift
  read -ra b <<<"$(stat_counters "$@")"
  for i in "${!a[@]}"; do out+=($((b[i] - a[i]))); done
  echo "${out[*]}"
}
seq_scans() { stat_counters seq_scan ref_country ref_note; }
scans_since() { counters_since "$1" seq_scan ref_country ref_note; }
wait_until "the earlier checks' sessions ended" refs_idle
scanned=$(seq_scans)
expect_exit 2 shardctl check --references --format json
wait_until "the check's sessions ended" refs_idle
assert_eq "$(scans_since "$scanned")" "2 3 1 3 1 3"

step "text, Nagios and Prometheus"
expect_exit 2 shardctl check --references
expect_stdout_contains "reference_differs"
expect_stdout_contains "\`shardctl table sync-reference public.ref_site\` fixes it"
expect_exit 2 shardctl check --references --format nagios --prometheus "$TEST_TMP/refs.prom"
expect_stdout_contains "SHARDCTL CRITICAL - 2 differing ref_city rows on 2 shards, 1 differing ref_country row on 1 shard, 2 differing ref_note rows on 1 shard, 3 differing ref_site rows on 1 shard |"
expect_stdout_contains "reference_differs=8 reference_tie=0 reference_drift=0"
grep -qxF 'shardctl_check_findings{kind="reference_differs",shard="shard_2"} 5' "$TEST_TMP/refs.prom" || fail "prometheus: $(cat "$TEST_TMP/refs.prom")"
grep -qxF 'shardctl_check_findings{kind="reference_tie",shard=""} 0' "$TEST_TMP/refs.prom" || fail "prometheus tie"

step "the source named with table set: the other copies are compared with it"
expect_exit 0 shardctl table set ref_note --source shard_3
expect_exit 2 shardctl check --references --format json
assert_eq "$(jq -c '[.findings[] | select(.table == "public.ref_note") | [.shard, .object, .count]] | sort' "$STDOUT")" '[["shard_1","source shard_3",2],["shard_2","source shard_3",2]]'
expect_exit 0 shardctl table set ref_note --no-source
expect_exit 64 shardctl table set ref_note --source nowhere
expect_stderr_contains "nowhere"
expect_exit 64 shardctl table set customers --source shard_1
expect_stderr_contains "table public.customers is sharded, not a reference table"
assert_eq "$(shardctl table list --format json | jq -c '[.tables[] | select(.kind == "reference") | [.name, .source]]')" '[["public.product",null],["public.ref_city","shard_1"],["public.ref_country","shard_1"],["public.ref_note",null],["public.ref_site","shard_1"],["public.region",null]]'

step "other columns on one shard: drift, never compared; copies without a majority: a tie"
for i in 1 2 3; do psql_shard "$i" -qc "create table ref_wide (id int primary key, v text); insert into ref_wide values (1, 'a');
  create table ref_split (id int primary key, v text); insert into ref_split values (1, 'shard $i')"; done
psql_shard 3 -qc "alter table ref_wide add column w int; update ref_wide set v = 'changed'"
expect_exit 0 shardctl table add-reference ref_wide
expect_exit 0 shardctl table add-reference ref_split
expect_exit 2 shardctl check --references --format json
assert_eq "$(jq -c '[.findings[] | select(.table == "public.ref_wide" or .table == "public.ref_split") | [.kind, .shard, .object, .count]] | sort' "$STDOUT")" '[["reference_drift","shard_3",null,1],["reference_tie",null,"shard_1 | shard_2 | shard_3",3]]'
assert_eq "$(jq -r '.findings[] | select(.kind == "reference_drift") | .detail' "$STDOUT")" "columns id integer, v text, w integer; primary key (id); the majority's: id integer, v text; primary key (id); never compared row by row"
expect_exit 0 shardctl table remove ref_wide
expect_exit 0 shardctl table remove ref_split

step "columns of every kind (floats, jsonb, arrays, enums, numerics by scale): a changed row located to its chunk; sync fixes it"
for i in 1 2 3; do psql_shard "$i" -q <<'SQL'
create type ref_mood as enum ('sad', 'ok', 'happy');
create table ref_misc (id int primary key, f float8, j jsonb, a int[], m ref_mood, t timestamptz, d date, u uuid,
                       n numeric, b boolean, x numeric(8, 2), v varchar(10), c char(3));
insert into ref_misc
select g, g / 3.0, jsonb_build_object('g', g), array[g, g + 1], (array['sad', 'ok', 'happy'])[g % 3 + 1]::ref_mood,
       timestamptz '2020-01-01' + g * interval '1 hour', date '2020-01-01' + g, md5(g::text)::uuid,
       case when g % 11 = 0 then null else g / 7.0 end, g % 2 = 0, g / 4.0, 'v' || g, (g % 100)::text
from generate_series(1, 5000) g;
analyze ref_misc;
SQL
done
misc_findings() { jq -c '[.findings[] | select(.table == "public.ref_misc")]' "$STDOUT"; }
expect_exit 0 shardctl table add-reference ref_misc --source shard_1
expect_exit 2 shardctl check --references --format json  # the other tables still differ
assert_eq "$(misc_findings)" "[]"
psql_shard 2 -qc "update ref_misc set j = '{\"g\": 0}' where id = 10; update ref_misc set f = f + 1e-12 where id = 20;
  update ref_misc set m = 'happy' where id = 30 and m <> 'happy'; update ref_misc set a = '{30}' where id = 31"
# The same value at another scale (1 and 1.00) is another text: a changed row.
psql_shard 3 -qc "update ref_misc set n = 1.00 where id = 7"
expect_exit 2 shardctl check --references --format json
assert_eq "$(jq -c '[.findings[] | select(.table == "public.ref_misc") | [.shard, .count, (.samples | join(" "))]] | sort' "$STDOUT")" '[["shard_2",4,"changed (10) changed (20) changed (30) changed (31)"],["shard_3",1,"changed (7)"]]'
assert_eq "$(finding shard_3 public.ref_misc .detail)" "1 of 5 chunk(s) differ from shard_1: 0 missing, 0 extra, 1 changed row(s); \`shardctl table sync-reference public.ref_misc\` fixes it"
[[ "$(finding shard_2 public.ref_misc .detail)" =~ ^[1-4]\ of\ 5\ chunk ]] || fail "detail: $(finding shard_2 public.ref_misc .detail)"
expect_exit 0 shardctl table sync-reference ref_misc
expect_exit 2 shardctl check --references --format json
assert_eq "$(misc_findings)" "[]"
expect_exit 0 shardctl table remove ref_misc

step "one-column keys of bigint, uuid, timestamptz: range chunks, the differing ones' rows read through the key's index"
# ref_big (200k rows: some 200 chunks, bounds from a TABLESAMPLE of the source) and ref_when
# (timestamptz) have shard_1 as their source, ref_uuid the majority (its bounds sampled once the
# whole digests chose it). shard_2: a changed row in ref_big's middle, a changed uuid row, a
# missing timestamp; shard_3: ref_big's lowest and highest keys missing and rows below and above
# every key extra (chunk 0 and the last chunk: no lower, no upper bound).
for i in 1 2 3; do psql_shard "$i" -q <<'SQL'
create table ref_big (id bigint primary key, v text not null);
insert into ref_big select g * 10, 'v' || g from generate_series(1, 200000) g;
create table ref_uuid (id uuid primary key, v int);
insert into ref_uuid select md5(g::text)::uuid, g from generate_series(1, 20000) g;
create table ref_when (at timestamptz primary key, v int);
insert into ref_when select timestamptz '2024-01-01 00:00:00.123456+00' + g * interval '1 minute', g from generate_series(1, 30000) g;
-- No parallel scan of it: each process of one counts a seq_scan of its own.
alter table ref_big set (parallel_workers = 0);
analyze ref_big; analyze ref_uuid; analyze ref_when;
SQL
done
expect_exit 0 shardctl table add-reference ref_big --source shard_1
expect_exit 0 shardctl table add-reference ref_uuid
expect_exit 0 shardctl table add-reference ref_when --source shard_1
psql_shard 2 -qc "update ref_big set v = 'changed' where id = 1000000; update ref_uuid set v = 0 where id = md5('777')::uuid;
  delete from ref_when where v = 12345"
psql_shard 3 -qc "delete from ref_big where id in (10, 2000000); insert into ref_big values (5, 'below'), (99999990, 'above')"
# Scans of ref_big and ref_uuid per shard, every session ended (refs_idle): seq_scan, idx_scan
# of ref_big on shards 1-3, then of ref_uuid.
range_counters="seq_scan || ' ' || coalesce(idx_scan, 0)"
range_scans() { stat_counters "$range_counters" ref_big ref_uuid; }
range_scans_since() { counters_since "$1" "$range_counters" ref_big ref_uuid; }
wait_until "the shards' sessions ended" refs_idle
scanned=$(range_scans)
expect_exit 2 shardctl check --references --format json
big=$(jq -c '[.findings[] | select(.table == "public.ref_big") | [.shard, .count, (.samples | join(" "))]] | sort' "$STDOUT")
assert_eq "$big" '[["shard_2",1,"changed (1000000)"],["shard_3",4,"missing (10) missing (2000000) extra (5) extra (99999990)"]]'
big_chunks=$(finding shard_2 public.ref_big .detail | sed -E 's/^1 of ([0-9]+) chunk.*/\1/')
# About 200 chunks: as many as the sample gave distinct bounds, plus one.
[ "$big_chunks" -gt 150 ] && [ "$big_chunks" -le 200 ] || fail "ref_big chunks: $(finding shard_2 public.ref_big .detail)"
assert_eq "$(finding shard_2 public.ref_big .detail)" "1 of $big_chunks chunk(s) differ from shard_1: 0 missing, 0 extra, 1 changed row(s); \`shardctl table sync-reference public.ref_big\` fixes it"
assert_eq "$(finding shard_3 public.ref_big .detail)" "2 of $big_chunks chunk(s) differ from shard_1: 2 missing, 2 extra, 0 changed row(s); \`shardctl table sync-reference public.ref_big\` fixes it"
assert_eq "$(jq -c '[.findings[] | select(.table == "public.ref_uuid" or .table == "public.ref_when") | [.shard, .table, .object, .count, (.samples | join(" "))]] | sort' "$STDOUT")" \
  "[[\"shard_2\",\"public.ref_uuid\",\"source shard_1 (majority of 3 copies)\",1,\"changed ($(psql_shard 1 -XAtc "select md5('777')::uuid"))\"],[\"shard_2\",\"public.ref_when\",\"source shard_1\",1,\"missing (\\\"2024-01-09 13:45:00.123456+00\\\")\"]]"
assert_eq "$(finding shard_2 public.ref_uuid .detail)" "1 of 20 chunk(s) differ from shard_1: 0 missing, 0 extra, 1 changed row(s); \`shardctl table sync-reference public.ref_uuid\` fixes it"
assert_eq "$(finding shard_2 public.ref_when .detail)" "1 of 30 chunk(s) differ from shard_1: 1 missing, 0 extra, 0 changed row(s); \`shardctl table sync-reference public.ref_when\` fixes it"
# ref_big (never scanned in parallel, so a scan counts one): shard_1, the named source, scans it
# once (chunk digests; its bounds come from a TABLESAMPLE, no seq scan) and reads the rows of the
# differing chunks through the index; the differing copies scan it twice (whole, chunk digests)
# and read their chunks' rows through the index (shard_3's two differing chunks are the first and
# the last: one range each). ref_uuid: shard_1, the majority (under 100k rows: its bounds read
# from every row), scans it thrice (whole, bounds, chunks), shard_2 twice, shard_3 once (its
# whole digest); the rows through the index.
wait_until "the check's sessions ended" refs_idle
read -ra d <<<"$(range_scans_since "$scanned")"
echo "ref_big, ref_uuid scans (seq idx, shards 1-3): ${d[*]}"
assert_eq "${d[0]} ${d[2]} ${d[4]} ${d[6]} ${d[8]} ${d[10]} ${d[11]}" "1 2 2 3 2 1 0"
[ "${d[1]}" -ge 1 ] && [ "${d[3]}" -ge 1 ] && [ "${d[5]}" -ge 1 ] && [ "${d[7]}" -ge 1 ] && [ "${d[9]}" -ge 1 ] || fail "index scans: ${d[*]}"
expect_exit 0 shardctl table sync-reference ref_big
expect_exit 0 shardctl table sync-reference ref_uuid
expect_exit 0 shardctl table sync-reference ref_when
expect_exit 2 shardctl check --references --format json
assert_eq "$(jq -c '[.findings[] | select(.table | test("ref_(big|uuid|when)"))]' "$STDOUT")" "[]"
for t in ref_big ref_uuid ref_when; do expect_exit 0 shardctl table remove "$t"; done

step "an unreachable shard: UNKNOWN (3) when nothing critical is found elsewhere"
mkdir -p "$TEST_TMP/nosock"
expect_exit 0 shardctl shard add shard_4 --dsn "host=$TEST_TMP/nosock port=1 dbname=x"
expect_exit 2 shardctl check --references --format json  # the differences still show
assert_eq "$(jq -r '.unreachable[].shard' "$STDOUT")" "shard_4"
for i in 2 3; do psql_shard "$i" -qc "truncate ref_note; truncate ref_site, ref_city, ref_country"; done
psql_shard 1 -XAtc "copy ref_note to stdout" | psql_shard 2 -qc "copy ref_note from stdin"
psql_shard 1 -XAtc "copy ref_note to stdout" | psql_shard 3 -qc "copy ref_note from stdin"
for t in ref_country ref_city ref_site; do
  for i in 2 3; do psql_shard 1 -XAtc "copy $t to stdout" | psql_shard "$i" -qc "copy $t from stdin"; done
done
expect_exit 3 shardctl check --references --format json
assert_eq "$(jq -c '[.status, .findings, [.unreachable[].shard]]' "$STDOUT")" '["unknown",[],["shard_4"]]'
expect_exit 3 shardctl check --references --format nagios
expect_stdout_contains "SHARDCTL UNKNOWN - shard shard_4 unreachable"
pass
