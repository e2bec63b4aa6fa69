# Shared helpers of the schema-zoo tests (t_zoo_*.sh) and the live-writer test
# (t_live_writers.sh). Source it after lib.sh:
#   source "$(dirname "$0")/lib.sh"; source "$(dirname "$0")/zoo_lib.sh"
#
# A zoo test builds its own schema on an empty fleet, declares its tables through these
# helpers (so the checks know every table, its map and key), loads rows, takes a baseline, and
# calls zoo_verify after every operation:
#   zoo_fleet NAME                    empty fleet, shards registered as shard_1..shard_N
#   zoo_all_shards <<'SQL' ... SQL    the same SQL on every shard (one transaction each)
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

shard_name() { jq -r ".shards[$(($1 - 1))].name" "$FLEET_JSON"; }

# Index (1..N) of the shard called NAME in the fleet.
shard_index() {
  local i
  for ((i = 1; i <= ZOO_SHARDS; i++)); do [ "$(shard_name "$i")" = "$1" ] && { echo "$i"; return; }; done
  fail "no shard named $1"
}

zoo_fleet() {
  fresh_fleet "$1" --empty
  ZOO_SHARDS=$(jq '.shards | length' "$FLEET_JSON")
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

zoo_sharded() {
  expect_exit 0 shardctl table add-sharded "$1" --map "$2" --key "$3"
  ZOO_SHARDED+=("$1|$2|$3")
}

zoo_reference() {
  expect_exit 0 shardctl table add-reference "$1"
  ZOO_REFS+=("$1")
}

# SQL for one relation's fingerprint row: LABEL, count, sum of a 64-bit hash of each row's text.
# SPEC is REL or REL|CONDITION (CONDITION on alias x). Row text includes every column
# (identity and generated ones too), so a changed value, a lost or a doubled row all show.
_zoo_fp_sql() {
  local spec=$1 rel cond=true
  rel=${spec%%|*}
  [[ "$spec" == *"|"* ]] && cond=${spec#*|}
  printf "select \$zl\$%s\$zl\$ as t, count(*) as c, coalesce(sum(('x' || substr(md5(x::text), 1, 16))::bit(64)::bigint::numeric), 0) as h from %s x where %s" \
    "$spec" "$rel" "$cond"
}

# zoo_fingerprint SPEC...: one line per SPEC, "SPEC COUNT SUM", over every shard of the fleet.
zoo_fingerprint() {
  local i spec sql="" values="" t c h
  for spec in "$@"; do sql+="${sql:+ union all }$(_zoo_fp_sql "$spec")"; done
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    while IFS=$'\t' read -r t c h; do
      values+="${values:+,}(\$zl\$$t\$zl\$, $c::numeric, $h::numeric)"
    done < <(psql_shard "$i" -XAt -F $'\t' -c "$sql" || fail "fingerprint query failed on shard $i")
  done
  psql_catalog -XAtc "select t || ' ' || sum(c) || ' ' || sum(h) from (values $values) v(t, c, h) group by t order by t"
}

# zoo_shard_fingerprint I SPEC: "COUNT SUM" of one relation on shard I alone.
zoo_shard_fingerprint() {
  psql_shard "$1" -XAt -F ' ' -c "select c, h from ($(_zoo_fp_sql "$2")) f" || fail "fingerprint query failed on shard $1"
}

_zoo_sharded_specs() { local e; for e in "${ZOO_SHARDED[@]}"; do echo "${e%%|*}"; done; }

# The baseline: fleet-wide fingerprints of the sharded tables; for each reference table, the
# fingerprint of its fullest copy (every shard holds that copy or nothing).
zoo_baseline() {
  local -a specs
  mapfile -t specs < <(_zoo_sharded_specs)
  ZOO_BASE_SHARDED=$(zoo_fingerprint "${specs[@]}")
  ZOO_BASE_REF=()
  local r i fp best
  for r in "${ZOO_REFS[@]}"; do
    best="0 0"
    for ((i = 1; i <= ZOO_SHARDS; i++)); do
      fp=$(zoo_shard_fingerprint "$i" "$r")
      [ "${fp%% *}" -gt "${best%% *}" ] && best=$fp
    done
    ZOO_BASE_REF[$r]=$best
  done
}

# Rows unchanged: the sharded tables' fleet fingerprints equal the baseline; every reference
# table is, on every shard, either the full baseline copy or empty.
zoo_assert_unchanged() {
  local label=$1
  local -a specs
  mapfile -t specs < <(_zoo_sharded_specs)
  local now
  now=$(zoo_fingerprint "${specs[@]}")
  if [ "$now" != "$ZOO_BASE_SHARDED" ]; then
    diff <(echo "$ZOO_BASE_SHARDED") <(echo "$now") >&2 || true
    fail "$label: sharded rows changed (fingerprint: < before, > after)"
  fi
  local r i fp
  for r in "${ZOO_REFS[@]}"; do
    for ((i = 1; i <= ZOO_SHARDS; i++)); do
      fp=$(zoo_shard_fingerprint "$i" "$r")
      [ "$fp" = "${ZOO_BASE_REF[$r]}" ] || [ "$fp" = "0 0" ] ||
        fail "$label: reference table $r on $(shard_name "$i") is neither the full copy nor empty: [$fp], want [${ZOO_BASE_REF[$r]}]"
    done
  done
}

# Every row of every declared sharded table sits on the shard `shardctl lookup` routes its key
# to (one query and one lookup stream per shard and map); no key is unmapped.
zoo_assert_routed() {
  local label=$1 i name map e sql wrong
  local -A maps=()
  for e in "${ZOO_SHARDED[@]}"; do
    IFS='|' read -r _ map _ <<<"$e"
    maps[$map]=1
  done
  for ((i = 1; i <= ZOO_SHARDS; i++)); do
    name=$(shard_name "$i")
    for map in "${!maps[@]}"; do
      sql=""
      for e in "${ZOO_SHARDED[@]}"; do
        local rel m key
        IFS='|' read -r rel m key <<<"$e"
        [ "$m" = "$map" ] || continue
        sql+="${sql:+ union }select ($key)::text from $rel where ($key) is not null"
      done
      psql_shard "$i" -XAtc "$sql" > "$TEST_TMP/zoo_keys" || fail "$label: key query failed on $name"
      "$SHARDCTL_BIN/shardctl" lookup --map "$map" - < "$TEST_TMP/zoo_keys" > "$TEST_TMP/zoo_routes" 2>"$TEST_TMP/zoo_lookup_err" ||
        fail "$label: lookup --map $map failed: $(cat "$TEST_TMP/zoo_lookup_err")"
      [ "$(wc -l < "$TEST_TMP/zoo_routes")" = "$(wc -l < "$TEST_TMP/zoo_keys")" ] ||
        fail "$label: lookup --map $map returned $(wc -l < "$TEST_TMP/zoo_routes") lines for $(wc -l < "$TEST_TMP/zoo_keys") keys"
      wrong=$(awk -F'\t' -v s="$name" '$2 != s' "$TEST_TMP/zoo_routes" | head -3)
      [ -z "$wrong" ] || fail "$label: rows of map $map on $name that the map routes elsewhere: $(echo "$wrong" | tr '\n\t' ';>')"
    done
  done
}

# No mapping left offline, no operation left unfinished.
zoo_assert_settled() {
  local label=$1 n
  n=$(psql_catalog -XAtc "select count(*) from shardctl.mappings where status <> 'online'")
  [ "$n" = 0 ] || fail "$label: $n mapping(s) left offline"
  n=$("$SHARDCTL_BIN/shardctl" op list --format json | jq '[.operations[] | select(.status != "done" and .status != "cancelled")] | length')
  [ "$n" = 0 ] || fail "$label: $n operation(s) not done"
}

zoo_check() {
  expect_exit 0 shardctl check
}

# zoo_verify LABEL: everything that must hold after an operation.
zoo_verify() {
  zoo_assert_settled "$1"
  zoo_assert_unchanged "$1"
  zoo_assert_routed "$1"
  local got=0
  "$SHARDCTL_BIN/shardctl" check >"$STDOUT" 2>"$STDERR" || got=$?
  [ "$got" = 0 ] || { cat "$STDOUT" "$STDERR" >&2; fail "$1: shardctl check exited $got"; }
}

# zoo_mappings MAP: "RANGE>SHARD ..." in key order.
zoo_mappings() {
  "$SHARDCTL_BIN/shardctl" mapping list --map "$1" --format json | jq -r '.mappings | map((.range // .point) + ">" + .shard) | join(" ")'
}

# zoo_op LABEL CMD...: runs a split/merge/move, which must exit 0 and end "done", then verifies.
zoo_op() {
  local label=$1; shift
  expect_exit 0 shardctl "$@" --format json
  [ "$(jq -r .status "$STDOUT")" = done ] || { cat "$STDOUT" >&2; fail "$label: operation not done"; }
  local batches
  batches=$(jq -r '.batches_done // 0' "$STDOUT")
  echo "# $label: $batches batch(es), $(jq -r '.rows_moved // "?"' "$STDOUT") rows; mappings now $(zoo_mappings "$(jq -r .map "$STDOUT")")"
  zoo_verify "$label"
}

# must_fail DESCRIPTION CMD...: a negative control. CMD (an assertion helper) runs in a subshell
# and must fail; proves the assertion can fail at all.
must_fail() {
  local what=$1; shift
  if ( "$@" ) >/dev/null 2>&1; then fail "negative control passed although it must fail: $what"; fi
}
