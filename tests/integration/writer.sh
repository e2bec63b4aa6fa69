#!/usr/bin/env bash
# An application writer for t_live_writers.sh: bash + psql, one autocommit statement per write
# over a psql session per shard kept open, on the sample fleet (customers / orders keyed by customer_id, range map `customers`).
#
#   writer.sh MODE ID LOG STOPFILE
#     MODE   stale:   routes every key once, at start, and keeps writing there (a stale map);
#            routing: runs `shardctl lookup` before every write, and after a 55000 refusal
#                     looks up again and retries once (as a new attempt with a new identity).
#     ID     1..9, makes the identities of this writer's rows unique.
#     LOG    one tab-separated line per attempt (see below).
#     STOPFILE  the writer stops, between writes, once this file exists.
#   Environment: SHARDCTL_BIN, SHARDCTL_CATALOG, FLEET_JSON (shard DSNs), WRITER_WAITS (if set,
#   a file: one line per acknowledged write, the milliseconds from its first try, lookups and a
#   retry included, to its acknowledgement), WRITER_ORDER_BASE
#   (new orders get order_id >= this), WRITER_CUSTOMER_BASE (new customers get ids >= this),
#   WRITER_CUSTOMERS (existing customers are 1..this).
#
# Each write is one of: a new order for an existing customer (60%), an update of the status of
# one of this writer's own acknowledged orders (20%), a new customer (20%). Log lines:
#   ACK  KIND CID OID SHARD VALUE      the statement succeeded (SQLSTATE 00000): acknowledged
#   MISS KIND CID OID SHARD VALUE      an UPDATE that matched no row (not acknowledged)
#   REF  KIND CID OID SHARD SQLSTATE MESSAGE   refused with SQLSTATE 55000
#   ERR  KIND CID OID SHARD SQLSTATE MESSAGE   anything else: the test fails on it
# KIND is ins_order, upd_order or ins_customer; OID is 0 for customers. VALUE is the order's
# status or the customer's name as written. Every line ends with two more fields, START and END:
# when the attempt's statement was sent and when its outcome came back (Unix seconds, to the
# microsecond: $EPOCHREALTIME), so a test can tell which attempts a held operation made wait.
# The writer's sessions carry application_name shardctl_writer_ID (pg_stat_activity shows
# which writer waits on what).
set -uo pipefail
mode=$1 id=$2 log=$3 stopfile=$4
: "${WRITER_ORDER_BASE:?}" "${WRITER_CUSTOMER_BASE:?}" "${WRITER_CUSTOMERS:?}"
RANDOM=$((id * 7919))

# psql without Debian's perl wrapper (a fifth of a second per call on a busy machine).
PSQL=psql
for p in $(ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1); do PSQL=$p; done

declare -A dsn=()
while IFS=$'\t' read -r n d; do dsn[$n]=$d; done < <(jq -r '.shards[] | [.name, .dsn] | @tsv' "$FLEET_JSON")

lookup() {  # lookup KEY -> shard name on stdout; empty on failure
  "$SHARDCTL_BIN/shardctl" lookup --map customers "$1" 2>/dev/null | cut -f2
}

# A stale writer's map: every existing customer and its own new-customer id range, routed now.
declare -A stale=()
new_customer_first=$((WRITER_CUSTOMER_BASE + id * 100000))
if [ "$mode" = stale ]; then
  while IFS=$'\t' read -r k s; do stale[$k]=$s; done < <(
    { seq 1 "$WRITER_CUSTOMERS"; echo "$new_customer_first"; } | "$SHARDCTL_BIN/shardctl" lookup --map customers -)
  [ "${#stale[@]}" -gt "$WRITER_CUSTOMERS" ] || { echo "writer $id: initial lookup failed" >&2; exit 1; }
fi

acked=()      # "CID OID" of this writer's acknowledged orders
seq=0

# One psql session per shard, kept open (as an application's connection pool would): the
# writer sends a statement and a \echo of its outcome, and reads that line back.
sessions="$(dirname "$log")/writer.$id.sessions"
rm -rf "$sessions"; mkdir -p "$sessions"
declare -A to=() from=()
open_session() {  # open_session SHARD
  local s=$1 fi fo
  mkfifo "$sessions/$s.in" "$sessions/$s.out"
  PGAPPNAME=shardctl_writer_$id "$PSQL" -X -q -At -v ON_ERROR_STOP=0 "${dsn[$s]}" <"$sessions/$s.in" >"$sessions/$s.out" 2>>"$sessions/$s.err" &
  exec {fi}>"$sessions/$s.in"
  exec {fo}<"$sessions/$s.out"
  to[$s]=$fi from[$s]=$fo
}
for s in "${!dsn[@]}"; do open_session "$s"; done

# run SHARD SQL: sets $rc (0 done, 1 failed), $rows (rows affected), $state and $msg (SQLSTATE
# and message of a failure), $t_sent and $t_back (EPOCHREALTIME when it was sent and answered).
run() {
  local shard=$1 sql=$2 line=""
  state="" msg="" rows=0 t_sent=$EPOCHREALTIME t_back=$EPOCHREALTIME
  if [ -z "$shard" ] || [ -z "${dsn[$shard]:-}" ]; then rc=1; state=none; msg="no shard for key (lookup gave '$shard')"; return; fi
  printf '%s;\n\\echo __R :SQLSTATE :ROW_COUNT :LAST_ERROR_MESSAGE\n' "$sql" >&"${to[$shard]}" 2>/dev/null
  while IFS= read -r -t 60 -u "${from[$shard]}" line; do [[ "$line" == "__R "* ]] && break; done
  t_back=$EPOCHREALTIME
  if [[ "$line" != "__R "* ]]; then rc=1; state=none; msg="session to $shard lost: $(tail -c 300 "$sessions/$shard.err" | tr '\n\t' '  ')"; return; fi
  read -r _ state rows msg <<<"$line"
  if [ "$state" = 00000 ]; then rc=0 msg=""; else rc=1; fi
}

shard_for() {  # shard_for CID: where this writer sends the key now
  if [ "$mode" = stale ]; then
    if [ "$1" -gt "$WRITER_CUSTOMERS" ]; then echo "${stale[$new_customer_first]}"; else echo "${stale[$1]}"; fi
  else
    lookup "$1"
  fi
}

# attempt KIND CID OID VALUE SQL: one write, logged; returns 0 acked, 1 refused (55000), 2 other.
attempt() {
  local kind=$1 cid=$2 oid=$3 value=$4 sql=$5 shard
  shard=$(shard_for "$cid")
  run "$shard" "$sql"
  if [ $rc = 0 ]; then
    if [ "$kind" = upd_order ] && [ "$rows" = 0 ]; then
      printf 'MISS\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$cid" "$oid" "$shard" "$value" "$t_sent" "$t_back" >>"$log"
      return 3
    fi
    printf 'ACK\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$cid" "$oid" "$shard" "$value" "$t_sent" "$t_back" >>"$log"
    return 0
  fi
  local tag=ERR
  [ "$state" = 55000 ] && tag=REF
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$kind" "$cid" "$oid" "$shard" "$state" "${msg//$'\t'/ }" "$t_sent" "$t_back" >>"$log"
  [ $tag = REF ] && return 1
  return 2
}

# waited T0: appends the milliseconds since T0 (an EPOCHREALTIME) to WRITER_WAITS.
waited() {
  [ -n "${WRITER_WAITS:-}" ] || return 0
  local now=${EPOCHREALTIME/./} t0=${1/./}
  echo $(((now - t0) / 1000)) >>"$WRITER_WAITS"
}

while [ ! -e "$stopfile" ]; do
  seq=$((seq + 1))
  t0=$EPOCHREALTIME
  r=$((RANDOM % 100))
  if [ $r -lt 20 ] && [ ${#acked[@]} -gt 0 ]; then
    # Update one of our own orders (new rows only: pre-existing rows are never touched).
    read -r cid oid <<<"${acked[$((RANDOM % ${#acked[@]}))]}"
    value="u$id-$seq"
    sql="update orders set status = '$value' where customer_id = $cid and order_id = $oid"
    attempt upd_order "$cid" "$oid" "$value" "$sql"
    res=$?
    if [ $res = 1 ] && [ "$mode" = routing ]; then attempt upd_order "$cid" "$oid" "$value" "$sql"; res=$?; fi
    [ $res = 0 ] && waited "$t0"
  elif [ $r -lt 40 ]; then
    # A new customer: its id lies beyond the sample's, in the last mapping's range.
    for try in 1 2; do
      cid=$((new_customer_first + seq * 2 + try - 1))
      value="w$id-c$seq-$try"
      attempt ins_customer "$cid" 0 "$value" \
        "insert into customers values ($cid, '$value', 1 + $cid % 8, timestamptz '2025-01-01 00:00+00')"
      res=$?
      [ $res = 0 ] && waited "$t0"
      [ $res = 1 ] && [ "$mode" = routing ] || break
    done
  else
    cid=$((1 + RANDOM % WRITER_CUSTOMERS))
    for try in 1 2; do
      oid=$((WRITER_ORDER_BASE + id * 100000 + seq * 2 + try - 1))
      value="w$id"
      attempt ins_order "$cid" "$oid" "$value" \
        "insert into orders values ($cid, $oid, timestamptz '2025-01-01 00:00+00', '$value')"
      res=$?
      [ $res = 0 ] && acked+=("$cid $oid") && waited "$t0"
      [ $res = 1 ] && [ "$mode" = routing ] || break
    done
  fi
done
for s in "${!to[@]}"; do fd=${to[$s]}; exec {fd}>&-; done
wait
exit 0
