# Sourced first by every benchmark, as `source "$(dirname "$0")/lib.sh" "${1:-}"` (its first
# argument, BIN_DIR): strict mode, $here (the repository), $bin (BIN_DIR, by default the release
# build's), a scratch directory $work that is removed on exit with the sandbox in it, the
# sandbox itself, and the timing helpers.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$here/build/release/bin}
work=$(mktemp -d /tmp/shardctl-bench.XXXXXX)
chmod 755 "$work"  # the sandbox's servers run as an unprivileged user when run as root
trap '"$bin/shardctl" sandbox down --dir "$work/sb" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

# now: seconds since the epoch, with nanoseconds; r EXPR: the expression rounded to 0.01.
now() { date +%s.%N; }
r() { echo "$1" | bc -l | awk '{ printf "%.2f", $1 }'; }

# sandbox_up [OPTION...]: the sandbox's clusters in $work/sb (with `--no-fleet`, empty).
sandbox_up() { "$bin/shardctl" sandbox up --dir "$work/sb" "$@" -q >/dev/null; }

# settle_fleet FLEET_JSON: every shard of the fleet in that file vacuumed, analyzed and checkpointed.
settle_fleet() {
  local dsn
  while read -r dsn; do psql -XAtqc "VACUUM (ANALYZE)" "$dsn"; psql -XAtqc "CHECKPOINT" "$dsn"; done < <(jq -r '.shards[].dsn' "$1")
}

# delete_customers DSN LO HI: a plain DELETE of customers [LO, HI) with their orders and order
# lines, children first, in one transaction: the limit shardctl's purge is measured against.
delete_customers() {
  psql -XAtq "$1" <<SQL
BEGIN;
DELETE FROM order_lines WHERE customer_id >= $2 AND customer_id < $3;
DELETE FROM orders WHERE customer_id >= $2 AND customer_id < $3;
DELETE FROM customers WHERE customer_id >= $2 AND customer_id < $3;
COMMIT;
SQL
}

# pipe FROM TO LO HI ORDER PGOPTIONS: the move benches' hand-made pipe (ORDER=pk: the load
# floor's PK-ordered copy), one COPY per table, parents first.
pipe() {  # FROM TO LO HI ORDER PGOPTIONS: one COPY pipe per table, parents first
  local t order
  for t in customers orders order_lines; do
    order=""
    if [ "$5" = pk ]; then
      order=$(psql -XAtc "select ' ORDER BY ' || string_agg(quote_ident(a.attname), ', ' order by k.i)
        from pg_index x, unnest(x.indkey) with ordinality k(n, i), pg_attribute a
        where x.indrelid = '$t'::regclass and x.indisprimary and a.attrelid = x.indrelid and a.attnum = k.n" "$1")
    fi
    psql -XAtc "COPY (SELECT * FROM $t WHERE customer_id >= $3 AND customer_id < $4$order) TO STDOUT (FORMAT binary)" "$1" |
      PGOPTIONS="$6" psql -XAtc "COPY $t FROM STDIN (FORMAT binary)" "$2" >/dev/null
  done
}
