#!/usr/bin/env bash
# A writer in bash + psql that follows the routing contract without any client library: before
# every write it asks the catalog `shardctl.route('customers', KEY)` (shard, dsn, version),
# then writes on that shard in a transaction that states the version first
# (`SET LOCAL shardctl.route = 'customers:VERSION'`); a refusal (SQLSTATE 55000) is classified
# by its constraint name (psql's VERBOSITY verbose prints "CONSTRAINT NAME:"), and the write
# is routed again and retried. Used by tests/integration/t_routing_writers*.sh next to the
# Python client; same rows and log format as clients/python/itests/writer.py.
#
#   routing_writer.sh ID LOG STOPFILE
#   Environment: SHARDCTL_CATALOG, WRITER_ORDER_BASE, WRITER_CUSTOMER_BASE, WRITER_CUSTOMERS,
#   WRITER_LO (default 251).
# Sessions are psql processes kept open (one to the catalog, one per shard DSN route() names),
# fed through FIFOs, as an application's connections would be.
set -uo pipefail
id=$1 log=$2 stopfile=$3
: "${WRITER_ORDER_BASE:?}" "${WRITER_CUSTOMER_BASE:?}" "${WRITER_CUSTOMERS:?}" "${SHARDCTL_CATALOG:?}"
lo=${WRITER_LO:-251}
RANDOM=$((id * 7919))
PSQL=psql
for p in $(ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1); do PSQL=$p; done

dir="$(dirname "$log")/rwriter.$id"
rm -rf "$dir"; mkdir -p "$dir"
declare -A to=() from=() sessions=()
nsess=0
# open_session DSN: a psql whose errors and \warn lines come back on one pipe, in order.
open_session() {
  local dsn=$1 n fi fo
  nsess=$((nsess + 1)); n=$nsess
  mkfifo "$dir/$n.in" "$dir/$n.out"
  "$PSQL" -X -q -At -F ' ' -v ON_ERROR_STOP=0 -v VERBOSITY=verbose "$dsn" <"$dir/$n.in" >"$dir/$n.out" 2>&1 &
  exec {fi}>"$dir/$n.in"
  exec {fo}<"$dir/$n.out"
  to[$dsn]=$fi from[$dsn]=$fo sessions[$dsn]=$n
  printf '\\set VERBOSITY verbose\n' >&"$fi"
}
open_session "$SHARDCTL_CATALOG"

# route KEY: sets r_shard r_dsn r_version (empty shard: unmapped or failed).
route() {
  local line fi=${to[$SHARDCTL_CATALOG]} fo=${from[$SHARDCTL_CATALOG]}
  r_shard="" r_dsn="" r_version=""
  printf "select shard, version, dsn from shardctl.route('customers', %s::bigint);\n\\\\warn __R\n" "$1" >&"$fi"
  while IFS= read -r -t 60 -u "$fo" line; do
    [ "$line" = "__R" ] && return 0
    [ -z "$r_shard" ] && read -r r_shard r_version r_dsn <<<"$line"
  done
  return 1
}

# txn DSN VERSION SQL: one transaction; sets w_state (SQLSTATE of the write), w_rows,
# c_state (of COMMIT), w_constraint and w_msg (of an error).
txn() {
  local dsn=$1 version=$2 sql=$3 line fi fo
  [ -n "${to[$dsn]:-}" ] || open_session "$dsn"
  fi=${to[$dsn]} fo=${from[$dsn]}
  w_state="" w_rows=0 c_state="" w_constraint="" w_msg=""
  printf "BEGIN;\nSET LOCAL shardctl.route = 'customers:%s';\n%s;\n\\\\warn __W :SQLSTATE :ROW_COUNT\nCOMMIT;\n\\\\warn __C :SQLSTATE\n" \
    "$version" "$sql" >&"$fi"
  while IFS= read -r -t 60 -u "$fo" line; do
    case $line in
      "__W "*) read -r _ w_state w_rows <<<"$line" ;;
      "__C "*) read -r _ c_state <<<"$line"; return 0 ;;
      "CONSTRAINT NAME:"*) w_constraint=${line#CONSTRAINT NAME:}; w_constraint=${w_constraint// /} ;;
      *ERROR:*) [ -n "$w_msg" ] || w_msg=${line#*ERROR:  } ;;
    esac
  done
  w_state=none w_msg="session lost"
  return 1
}

out() { local IFS=$'\t'; printf '%s\n' "$*" >>"$log"; }

# write KIND CID OID VALUE SQL: routes, writes, retries refusals; 0 when acknowledged.
write() {
  local kind=$1 cid=$2 oid=$3 value=$4 sql=$5 try
  # Refusals are retried for up to WRITER_GIVE_UP_S seconds (default 30): an offline batch holds
  # its keys for as long as its copy takes, longer on a loaded machine.
  local give_up_at=$((SECONDS + ${WRITER_GIVE_UP_S:-30}))
  for ((try = 1; SECONDS < give_up_at; try++)); do
    if ! route "$cid" || [ -z "$r_shard" ]; then out ERR "$kind" "$cid" "$oid" "?" none "route() failed or unmapped"; return 1; fi
    txn "$r_dsn" "$r_version" "$sql"
    if [ "$w_state" = 00000 ] && [ "$c_state" = 00000 ]; then
      if [ "$kind" = upd_order ] && [ "$w_rows" = 0 ]; then out MISS "$kind" "$cid" "$oid" "$r_shard" "$value"; return 1; fi
      out ACK "$kind" "$cid" "$oid" "$r_shard" "$value"
      return 0
    fi
    local state=$w_state
    [ "$state" = 00000 ] && state=$c_state
    if [ "$state" = 55000 ]; then
      case $w_constraint in
        shardctl_moving|shardctl_fenced|shardctl_stale_route) out RET "$kind" "$cid" "$oid" "$r_shard" "$w_constraint" ;;
        *) out UNC "$kind" "$cid" "$oid" "$r_shard" 55000 "${w_msg//$'\t'/ }" ;;
      esac
      [ "$w_constraint" = shardctl_moving ] || [ -z "$w_constraint" ] && sleep 0.00$((1 + try % 9))
      continue
    fi
    out ERR "$kind" "$cid" "$oid" "$r_shard" "$state" "${w_msg//$'\t'/ }"
    return 1
  done
  out REF "$kind" "$cid" "$oid" "$r_shard" "$w_constraint"
  return 1
}

acked=()
seq=0
new_customer_first=$((WRITER_CUSTOMER_BASE + id * 100000))
while [ ! -e "$stopfile" ]; do
  seq=$((seq + 1))
  r=$((RANDOM % 100))
  if [ $r -lt 20 ] && [ ${#acked[@]} -gt 0 ]; then
    read -r cid oid <<<"${acked[$((RANDOM % ${#acked[@]}))]}"
    value="u$id-$seq"
    write upd_order "$cid" "$oid" "$value" "update orders set status = '$value' where customer_id = $cid and order_id = $oid"
  elif [ $r -lt 35 ]; then
    cid=$((new_customer_first + seq))
    value="w$id-c$seq"
    write ins_customer "$cid" 0 "$value" "insert into customers values ($cid, '$value', 1 + $cid % 8, timestamptz '2025-01-01 00:00+00')"
  else
    cid=$((lo + RANDOM % (WRITER_CUSTOMERS - lo + 1)))
    oid=$((WRITER_ORDER_BASE + id * 100000 + seq))
    value="w$id"
    write ins_order "$cid" "$oid" "$value" "insert into orders values ($cid, $oid, timestamptz '2025-01-01 00:00+00', '$value')" &&
      acked+=("$cid $oid")
  fi
done
for d in "${!to[@]}"; do fd=${to[$d]}; exec {fd}>&-; done
wait
exit 0
