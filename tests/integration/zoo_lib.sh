# Shared helpers of the schema-zoo tests (t_zoo_*.sh) and the live-writer test
# (t_live_writers.sh). Source it after lib.sh:
#   source "$(dirname "$0")/lib.sh"; source "$(dirname "$0")/zoo_lib.sh"
#
# A zoo test builds its own schema on an empty fleet, declares its tables through these
# helpers (so the checks know every table, its map and key), loads rows, takes a baseline, and
# calls zoo_verify after every operation:
#   zoo_fleet NAME                    empty fleet, shards registered as shard_1..shard_N
#   zoo_all_shards <<'SQL' ... SQL    the same SQL on every shard (one transaction each)
#   zoo_map MAP KIND KEY_TYPE         a map whose one mapping holds every key on shard_1
#   zoo_sharded REL MAP KEY           table add-sharded, remembered for the checks
#   zoo_reference REL                 table add-reference, remembered for the checks
#   zoo_baseline                      fingerprints of every declared table, taken now
#   zoo_verify LABEL                  rows unchanged, each on its routed shard, check exit 0
# REL and KEY are SQL identifiers as shardctl takes them ('"Sales"."Order Lines"',
# '"Tenant Id"', plain names fold to lower case) and are pasted into SQL as they are.

ZOO_SHARDS=0
ZOO_SHARDED=()   # "REL|MAP|KEY"
ZOO_REFS=()      # "REL"
ZOO_BASE_SHARDED=""
declare -A ZOO_BASE_REF=()

zoo_fleet() {
  fresh_fleet "$1" --empty
  ZOO_SHARDS=$(fleet_shards)
  ZOO_SHARDED=()
  ZOO_REFS=()
  local i
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    "$SHARDCTL_BIN/shardctl" shard add "$(shard_name "$i")" --dsn "$(shard_dsn "$i")" >/dev/null ||
      fail "could not register shard $i"
  done
}

# zoo_all_shards: SQL from stdin, run on every shard, each in one transaction.
zoo_all_shards() {
  local sql i
  sql=$(cat)
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    psql_shard "$i" -q -1 <<<"$sql" >/dev/null || fail "SQL failed on shard $i: ${sql:0:200}"
  done
}

zoo_map() {
  expect_exit 0 shardctl map create "$1" --kind "$2" --key-type "$3"
  expect_exit 0 shardctl mapping add --map "$1" --range .. --shard shard_1
}

zoo_sharded() {
  expect_exit 0 shardctl table add-sharded "$1" --map "$2" --key "$3"
  ZOO_SHARDED+=("$1|$2|$3")
}

zoo_reference() {
  expect_exit 0 shardctl table add-reference "$1"
  ZOO_REFS+=("$1")
}

# SQL for one relation's fingerprint: LABEL, count, and the sums of the high and the low 32 bits
# of a 64-bit hash of each row's text (two sums that fit in 64 bits, so the shell can add them
# up exactly). SPEC is REL or REL|CONDITION (CONDITION on alias x). Row text includes every
# column (identity and generated ones too): a changed value, a lost or a doubled row all show.
_zoo_fp_sql() {
  local spec=$1 rel cond=true
  rel=${spec%%|*}
  if [[ "$spec" == *"|"* ]]; then cond=${spec#*|}; fi
  printf "select 'F' as w, \$zl\$%s\$zl\$ as t, count(*)::text as c, (coalesce(sum(h >> 32), 0)::bigint || ' ' || coalesce(sum(h & 4294967295), 0)::bigint) as h from (select ('x' || substr(md5(x::text), 1, 16))::bit(64)::bigint as h from %s x where %s) f" \
    "$spec" "$rel" "$cond"
}

# SQL for the keys of one sharded table: 'K', MAP, key as text.
_zoo_keys_sql() {
  local rel=$1 map=$2 key=$3
  printf "select 'K', \$zl\$%s\$zl\$, (%s)::text, '' from %s where (%s) is not null" "$map" "$key" "$rel" "$key"
}

# _zoo_collect SQL-PARTS...: runs the union of the parts on every shard, one query per shard;
# writes $TEST_TMP/zoo_collect.I (tab-separated: W T C H).
_zoo_collect() {
  local i sql="" part
  for part in "$@"; do sql+="${sql:+ union all }$part"; done
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    psql_shard "$i" -XAt -F $'\t' -c "$sql" > "$TEST_TMP/zoo_collect.$i" || fail "query failed on shard $i: ${sql:0:300}"
  done
}

# Fleet-wide fingerprint lines "SPEC<TAB>COUNT HI LO" (sorted) from the collected files.
_zoo_fleet_fp() {
  local i
  for ((i = 1; i <= ZOO_SHARDS; i++)); do awk -F'\t' '$1 == "F"' "$TEST_TMP/zoo_collect.$i"; done |
    awk -F'\t' '{ split($4, h, " "); c[$2] += $3; hi[$2] += h[1]; lo[$2] += h[2] }
                END { for (t in c) printf "%s\t%.0f %.0f %.0f\n", t, c[t], hi[t], lo[t] }' | LC_ALL=C sort
}

# zoo_fingerprint SPEC...: one line per SPEC, "SPEC<TAB>COUNT HI LO", over every shard of the fleet.
zoo_fingerprint() {
  local spec parts=()
  for spec in "$@"; do parts+=("$(_zoo_fp_sql "$spec")"); done
  _zoo_collect "${parts[@]}"
  _zoo_fleet_fp
}

# zoo_shard_fingerprint I SPEC: "COUNT HI LO" of one relation on shard I alone.
zoo_shard_fingerprint() {
  psql_shard "$1" -XAt -F ' ' -c "select c, h from ($(_zoo_fp_sql "$2")) f" || fail "fingerprint query failed on shard $1"
}

# Collects fingerprints of every declared table and the keys of every sharded table, one query
# per shard.
_zoo_collect_all() {
  local e rel map key parts=()
  for e in "${ZOO_SHARDED[@]}"; do
    IFS='|' read -r rel map key <<<"$e"
    parts+=("$(_zoo_fp_sql "$rel")" "$(_zoo_keys_sql "$rel" "$map" "$key")")
  done
  for rel in "${ZOO_REFS[@]}"; do parts+=("$(_zoo_fp_sql "$rel")"); done
  _zoo_collect "${parts[@]}"
}

# The fingerprint of sharded tables (fleet-wide) from the collected files.
_zoo_sharded_fp() {
  local e
  _zoo_fleet_fp | while IFS= read -r line; do
    for e in "${ZOO_SHARDED[@]}"; do
      if [ "${line%%$'\t'*}" = "${e%%|*}" ]; then echo "$line"; fi
    done
  done
  return 0
}

# A reference table's fingerprint on shard I from the collected files: "COUNT HI LO".
_zoo_ref_fp() {
  awk -F'\t' -v t="$2" '$1 == "F" && $2 == t { print $3 " " $4 }' "$TEST_TMP/zoo_collect.$1"
}

# The baseline: fleet-wide fingerprints of the sharded tables; for each reference table, the
# fingerprint of its fullest copy (every shard must hold that copy or nothing).
zoo_baseline() {
  _zoo_collect_all
  ZOO_BASE_SHARDED=$(_zoo_sharded_fp)
  ZOO_BASE_REF=()
  local r i fp best
  for r in "${ZOO_REFS[@]}"; do
    best="0 0 0"
    for ((i = 1; i <= ZOO_SHARDS; i++)); do
      fp=$(_zoo_ref_fp "$i" "$r")
      if [ "${fp%% *}" -gt "${best%% *}" ]; then best=$fp; fi
    done
    ZOO_BASE_REF[$r]=$best
  done
}

# Rows unchanged: the sharded tables' fleet fingerprints equal the baseline; every reference
# table is, on every shard, either the full baseline copy or empty. (Uses the collected files:
# call after _zoo_collect_all.)
_zoo_unchanged_collected() {
  local label=$1 now r i fp
  now=$(_zoo_sharded_fp)
  if [ "$now" != "$ZOO_BASE_SHARDED" ]; then
    diff <(echo "$ZOO_BASE_SHARDED") <(echo "$now") >&2 || true
    # Which tables changed, by name, so that a negative control can say which one it expects.
    local changed
    changed=$(awk -F'\t' 'NR == FNR { if ($1 != "") b[$1] = $2; next }
                           $1 != "" { if (!($1 in b) || b[$1] != $2) print $1; delete b[$1] }
                           END { for (t in b) print t }' <(echo "$ZOO_BASE_SHARDED") <(echo "$now") | LC_ALL=C sort | paste -sd ' ')
    fail "$label: sharded rows changed in $changed (fingerprint: < before, > after)"
  fi
  for r in "${ZOO_REFS[@]}"; do
    for ((i = 1; i <= ZOO_SHARDS; i++)); do
      fp=$(_zoo_ref_fp "$i" "$r")
      [ "$fp" = "${ZOO_BASE_REF[$r]}" ] || [ "$fp" = "0 0 0" ] ||
        fail "$label: reference table $r on $(shard_name "$i") is neither the full copy nor empty: [$fp], want [${ZOO_BASE_REF[$r]}]"
    done
  done
}

# Every row of every declared sharded table sits on the shard `shardctl lookup` routes its key
# to; no key is unmapped. (Uses the collected files: one lookup stream per map.)
_zoo_routed_collected() {
  local label=$1 i map wrong
  local -A maps=()
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    while IFS= read -r map; do maps[$map]=1; done < <(awk -F'\t' '$1 == "K" { print $2 }' "$TEST_TMP/zoo_collect.$i" | sort -u)
  done
  for map in "${!maps[@]}"; do
    for ((i = 1; i <= ZOO_SHARDS; i++)); do
      awk -F'\t' -v m="$map" -v s="$(shard_name "$i")" '$1 == "K" && $2 == m { print s "\t" $3 }' "$TEST_TMP/zoo_collect.$i"
    done > "$TEST_TMP/zoo_keys"
    cut -f2 "$TEST_TMP/zoo_keys" | "$SHARDCTL_BIN/shardctl" lookup --map "$map" - > "$TEST_TMP/zoo_routes" 2>"$TEST_TMP/zoo_lookup_err" ||
      fail "$label: lookup --map $map failed: $(cat "$TEST_TMP/zoo_lookup_err")"
    [ "$(wc -l < "$TEST_TMP/zoo_routes")" = "$(wc -l < "$TEST_TMP/zoo_keys")" ] ||
      fail "$label: lookup --map $map returned $(wc -l < "$TEST_TMP/zoo_routes") lines for $(wc -l < "$TEST_TMP/zoo_keys") keys"
    wrong=$(paste "$TEST_TMP/zoo_keys" "$TEST_TMP/zoo_routes" | awk -F'\t' '$1 != $4 { print $2 " on " $1 ", routed to " $4 }' | head -3)
    [ -z "$wrong" ] || fail "$label: rows of map $map on a shard the map does not route them to: $(echo "$wrong" | paste -sd ';')"
  done
}

zoo_assert_unchanged() { _zoo_collect_all; _zoo_unchanged_collected "$1"; }
zoo_assert_routed() { _zoo_collect_all; _zoo_routed_collected "$1"; }

# No mapping left offline, no operation left unfinished.
zoo_assert_settled() {
  local label=$1 n
  n=$(psql_catalog -XAtc "select count(*) from shardctl.mappings where status <> 'online'")
  [ "$n" = 0 ] || fail "$label: $n mapping(s) left offline"
  n=$("$SHARDCTL_BIN/shardctl" op list --format json | jq '[.operations[] | select(.status != "done" and .status != "cancelled")] | length')
  [ "$n" = 0 ] || fail "$label: $n operation(s) not done"
}

# zoo_verify LABEL: everything that must hold after an operation.
zoo_verify() {
  zoo_assert_settled "$1"
  _zoo_collect_all
  _zoo_unchanged_collected "$1"
  _zoo_routed_collected "$1"
  local got=0
  # Not --references: a zoo loads its reference rows on shard_1 only, and a move copies them to
  # an empty target, so the other copies differ by design (t_check_references tests those).
  "$SHARDCTL_BIN/shardctl" check --orphans --strays --map-consistency >"$STDOUT" 2>"$STDERR" || got=$?
  [ "$got" = 0 ] || { cat "$STDOUT" "$STDERR" >&2; fail "$1: shardctl check exited $got"; }
}

# zoo_mappings MAP: "RANGE>SHARD ..." in key order.
zoo_mappings() {
  "$SHARDCTL_BIN/shardctl" mapping list --map "$1" --format json | jq -r '.mappings | map((.range // .point) + ">" + .shard) | join(" ")'
}

# zoo_op LABEL CMD...: runs a split/merge/move (with --online when ZOO_ONLINE is set: the
# t_zoo_online_*.sh wrappers run a zoo test's moves that way, with writes streamed to its first
# batch when the zoo sets ZOO_STREAM_WRITE, below), which must exit 0, end "done" and run in more
# than one batch (the zoo tests exist to take unusual schemas across batch boundaries: a
# single batch would hide what the second one gets wrong), then verifies. The batches are
# counted twice and must agree: the flips the process itself reached (SHARDCTL_FAULT_TRACE
# writes one "journal.flipped@bBATCH N" line per batch, lib/fault/fault.hpp, lib/migrate/runner.cpp)
# and the operation's journal (batches done of batches planned: the command's JSON is the
# journal's status read back after the run, Engine::run in lib/migrate/engine.cpp, the same
# as `shardctl op show ID`).
zoo_op() {
  local label=$1; shift
  local trace="$TEST_TMP/zoo_op.trace" op map rows flips journal
  rm -f "$trace"
  if [ -n "${ZOO_ONLINE:-}" ] && [ -n "${ZOO_STREAM_WRITE:-}" ]; then
    _zoo_op_streamed "$label" "$trace" "$@"
  else
    SHARDCTL_FAULT_TRACE=$trace expect_exit 0 shardctl "$@" ${ZOO_ONLINE:+--online} --format json
  fi
  [ "$(jq -r .status "$STDOUT")" = done ] || { cat "$STDOUT" >&2; fail "$label: operation not done"; }
  IFS=$'\t' read -r op map rows journal < <(jq -r '[.id, .map, .rows_moved, "\(.batches_done)/\(.batches)"] | @tsv' "$STDOUT")
  flips=0
  if [ -f "$trace" ]; then flips=$(grep -c '^journal\.flipped[@ ]' "$trace" || true); fi
  [ "$journal" = "$flips/$flips" ] ||
    fail "$label: the journal of operation $op says $journal batch(es) done, the process flipped $flips"
  [ "$flips" -ge 2 ] || fail "$label: ran in $flips batch(es), the test needs more than one"
  echo "# $label: $flips batches, $rows rows; mappings now $(zoo_mappings "$map")"
  zoo_verify "$label"
  # An online operation done leaves none of its streams on any shard.
  if [ -n "${ZOO_ONLINE:-}" ]; then zoo_assert_no_streams "$label"; fi
}

# zoo_assert_no_streams LABEL: no shard of the fleet holds anything of an online move's streams:
# publication, replication slot, subscription (lib.sh, shardctl_streams, by their shardctl_op_
# names), the stream-key trigger on a target's table or its records of a stream's keys
# (shardctl.stream_watch, shardctl.stream_keys). Every online operation that ends done (a run,
# or a resume after a cut-over gave up or a run was killed) must leave this so (shardctl-split(1),
# "Online moves": each object is dropped on finish). The first call of a test proves it can
# fail: a publication of shardctl's name made on shard_1 must be reported, exactly.
_zoo_streams_proven=""
zoo_assert_no_streams() {
  local label=$1 i left n
  n=$(fleet_shards)
  if [ -z "$_zoo_streams_proven" ]; then
    _zoo_streams_proven=1
    psql_shard 1 -qc "create publication shardctl_op_negative_control"
    must_fail "a publication left on shard_1" \
      "control: replication objects of shardctl left on $(shard_name 1): shardctl_op_negative_control" \
      zoo_assert_no_streams control
    psql_shard 1 -qc "drop publication shardctl_op_negative_control"
  fi
  for ((i = 1; i <= n; i++)); do
    left=$(shardctl_streams "$i")
    [ -z "$left" ] || fail "$label: replication objects of shardctl left on $(shard_name "$i"): $left"
  done
}

# Writes through an online batch's stream. A zoo that sets ZOO_STREAM_KEYS (SQL: the key, as
# text, of each row of the table its writes are keyed on) and ZOO_STREAM_WRITE (SQL reading the
# psql variable :'keys', a text[] of two keys) has each online zoo_op held after its first
# batch's copy (SHARDCTL_FAULT_PAUSE=online.copied:1) while ZOO_STREAM_WRITE runs on the batch's
# source with two keys of that batch: keys the target already holds a copy of, whose changes
# reach it only through the batch's replication stream (publication row filter, replica
# identity, partitions published through their root). The baseline takes in what the write
# changed (the source's fingerprints of the sharded tables before and after it), so zoo_verify
# requires every row the write inserted, updated or deleted to be so on the target too.
_zoo_op_streamed() {
  local label=$1 trace=$2 pid got=0
  shift 2
  SHARDCTL_FAULT_TRACE=$trace SHARDCTL_FAULT_PAUSE=online.copied:1 \
    "$SHARDCTL_BIN/shardctl" "$@" --online --format json >"$STDOUT" 2>"$STDERR" &
  pid=$!
  wait_stopped "$pid" "$label" "$STDERR"
  # In a subshell, so that a failure there does not leave the operation stopped: it is killed.
  if ! (_zoo_stream_write "$label" "$@"); then
    kill -KILL "$pid"
    wait "$pid" || true
    fail "$label: the write through the first batch's stream failed (the operation was killed)"
  fi
  ZOO_BASE_SHARDED=$(cat "$TEST_TMP/zoo_stream.baseline")
  kill -CONT "$pid"
  wait "$pid" || got=$?
  if [ "$got" != 0 ]; then
    echo "--- stdout:" >&2; head -c 4000 "$STDOUT" >&2
    echo "--- stderr:" >&2; head -c 4000 "$STDERR" >&2
    fail "$label: expected exit 0, got $got: shardctl $* --online"
  fi
}

# _zoo_stream_write LABEL CMD...: while the operation CMD (--to or --into names its target) is
# held after its first batch's copy: that batch's keys are those both its source and its target
# hold now. Runs ZOO_STREAM_WRITE on the source with the first two, in key order, and writes the
# baseline that takes it in to $TEST_TMP/zoo_stream.baseline.
_zoo_stream_write() {
  local label=$1 target="" arg prev="" i t=0 s=0 keys=""
  shift
  for arg in "$@"; do
    if [ "$prev" = --to ] || [ "$prev" = --into ]; then target=$arg; fi
    prev=$arg
  done
  for ((i = 1; i <= ZOO_SHARDS; i++)); do [ "$(shard_name "$i")" != "$target" ] || t=$i; done
  [ "$t" != 0 ] || fail "$label: no target shard named in: $*"
  psql_shard "$t" -XAtc "$ZOO_STREAM_KEYS" | LC_ALL=C sort -u >"$TEST_TMP/zoo_stream.target"
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    [ "$i" != "$t" ] || continue
    keys=$(psql_shard "$i" -XAtc "$ZOO_STREAM_KEYS" | LC_ALL=C sort -u | LC_ALL=C comm -12 - "$TEST_TMP/zoo_stream.target" | awk 'NR <= 2')
    if [ -n "$keys" ]; then s=$i; break; fi
  done
  [ "$s" != 0 ] && [ "$(wc -l <<<"$keys")" = 2 ] ||
    fail "$label: after the first batch's copy, no source shard shares two keys with $target (ZOO_STREAM_KEYS: $ZOO_STREAM_KEYS)"
  # A text[] literal of the two keys, each double-quoted (no key holds a quote or a backslash).
  keys="{$(sed 's/.*/"&"/' <<<"$keys" | paste -sd,)}"
  local e parts=() before after
  for e in "${ZOO_SHARDED[@]}"; do parts+=("$(_zoo_fp_sql "${e%%|*}")"); done
  local fp_sql
  fp_sql=$(printf '%s union all ' "${parts[@]}")
  fp_sql="select t, c || ' ' || h from (${fp_sql% union all }) f order by t"
  before=$(psql_shard "$s" -XAt -F $'\t' -c "$fp_sql") || fail "$label: fingerprint query failed on shard $s"
  psql_shard "$s" -q -1 -v keys="$keys" <<<"$ZOO_STREAM_WRITE" >/dev/null ||
    fail "$label: ZOO_STREAM_WRITE failed on $(shard_name "$s") with keys $keys"
  after=$(psql_shard "$s" -XAt -F $'\t' -c "$fp_sql") || fail "$label: fingerprint query failed on shard $s"
  [ "$before" != "$after" ] || fail "$label: ZOO_STREAM_WRITE changed nothing on $(shard_name "$s") (keys $keys)"
  echo "# $label: wrote to keys $keys on $(shard_name "$s") after the first batch's copy"
  awk -F'\t' 'FNR == 1 { f++ }
      f < 3 { split($2, v, " "); for (k = 1; k <= 3; k++) d[$1, k] += (f == 1 ? -v[k] : v[k]); next }
      { split($2, v, " "); printf "%s\t%.0f %.0f %.0f\n", $1, v[1] + d[$1, 1], v[2] + d[$1, 2], v[3] + d[$1, 3] }' \
    <(echo "$before") <(echo "$after") <(echo "$ZOO_BASE_SHARDED") >"$TEST_TMP/zoo_stream.baseline"
}

# must_fail WHAT MESSAGE CMD...: a negative control. CMD (an assertion helper) runs in a subshell
# and must fail through lib.sh's `fail` (exit 1) with exactly MESSAGE: proves the assertion can
# fail at all, and for the reason the control is about (a broken query, or the right check
# failing on the wrong table, fails the control).
must_fail() {
  local what=$1 want=$2 got=0; shift 2
  ( "$@" ) >"$TEST_TMP/must_fail.out" 2>"$TEST_TMP/must_fail.err" || got=$?
  [ "$got" != 0 ] || fail "negative control passed although it must fail: $what"
  # lib.sh's failure line: "FAIL [TEST] <step and line>: MESSAGE".
  local line matched=""
  while IFS= read -r line; do
    [[ "$line" == "FAIL [$TEST_NAME]"*": $want" ]] && matched=1
  done < "$TEST_TMP/must_fail.err"
  if [ "$got" != 1 ] || [ -z "$matched" ]; then
    echo "--- stderr of the control:" >&2; head -c 4000 "$TEST_TMP/must_fail.err" >&2
    fail "negative control failed otherwise than it must: $what: want exit 1 and [$want], got exit $got"
  fi
}
