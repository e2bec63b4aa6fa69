#!/usr/bin/env bash
# Benchmark: a move on a heap whose rows arrived over time, against the raw
# operations on a twin copy of the same files, in one run. Per layout, each shard of a 2-shard
# fleet holds 2*C customers (shard_1 [1, 2C], shard_2 [2C+1, 4C]), 10 orders per customer and
# 1-5 lines per order (3 on average): 41*C rows per C customers. Layouts:
#   scattered  orders created over time for random customers of the shard, each order's lines
#              with it: every customer's rows are spread over the whole heap, as in an OLTP table
#   shuffled   every table's rows inserted in an order given by a hash of their primary key
#              (customers too): no two rows of a customer, nor two lines of one order, nor two
#              neighbouring customers share a page but by chance; a key-ordered read of any
#              table visits pages in random order, as after a bulk load in random order
#   ordered    the same rows inserted in primary-key order (bench/move_speed.sh's layout)
# The fleet "hand" is loaded once per layout and left as loaded; every method runs on a clone of
# it, file for file (CREATE DATABASE ... TEMPLATE), so all start from the same pages. Two ranges
# of C customers each:
#   R1 = upper half of shard_1 (shard_1 -> shard_2), R2 = lower half of shard_2 (shard_2 -> shard_1).
# Once per layout, on a clone: R1 by the hand-made pipe (COPY binary per table, parents first,
#   FK checked) plus one DELETE per table, children first.
# Then BENCH_ROUNDS rounds (default 3), each on two fresh clones, floors first:
#   floors: R2 by the load floor (the pipe in primary-key order into a session with
#     session_replication_role = replica), then the purge floor (R2's DELETE on shard_2,
#     children first, session_replication_role = replica, one transaction);
#   shardctl: R2 by `shardctl split --move lower --to shard_1` (the fast path), default batches.
# Each round gives its ratios; the report's ratios are their medians (a 2-core machine's speed
# can change by half from one minute to the next, and the rounds interleave the two). With
# BENCH_CHECKED=1 the first round also moves R1 by `shardctl split` on the checked path.
# The serial floor is load floor + purge floor. Usage:
#   bench/move_scattered.sh [BIN_DIR] [C] ["LAYOUT ..."]   (C default 100000: 4.1M rows per range;
#   layouts default "scattered shuffled ordered"). BENCH_PARALLEL=N passes --parallel N to shardctl.
# BENCH_BASE_BIN=DIR also runs, in every round, the split by the shardctl in DIR (a build to
# compare with) on a clone of its own, before or after this build's by turns.
source "$(dirname "$0")/lib.sh" "${1:-}"
C=${2:-100000}
read -ra layouts <<< "${3:-scattered shuffled ordered}"

echo "uptime at start: $(uptime)"
sandbox_up --no-fleet
r1_lo=$((C + 1)); r1_hi=$((2 * C + 1))
r2_lo=$((2 * C + 1)); r2_hi=$((3 * C + 1))

schema_sql="
CREATE TABLE region (region_id integer PRIMARY KEY, name text NOT NULL);
CREATE TABLE product (product_id integer PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL,
                      region_id integer NOT NULL REFERENCES region);
CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text NOT NULL, region_id integer NOT NULL REFERENCES region,
                        created_at timestamptz NOT NULL);
CREATE TABLE orders (customer_id bigint NOT NULL REFERENCES customers, order_id integer NOT NULL,
                     ordered_at timestamptz NOT NULL, status text NOT NULL, PRIMARY KEY (customer_id, order_id));
CREATE TABLE order_lines (customer_id bigint NOT NULL, order_id integer NOT NULL, line_no integer NOT NULL,
                          product_id integer NOT NULL REFERENCES product, quantity integer NOT NULL,
                          amount numeric(12,2) NOT NULL, PRIMARY KEY (customer_id, order_id, line_no),
                          FOREIGN KEY (customer_id, order_id) REFERENCES orders);
INSERT INTO region SELECT g, 'region ' || g FROM generate_series(1, 8) g;
INSERT INTO product SELECT g, 'product ' || g, 1 + ((g * 7919) % 10000) / 100.0, 1 + g % 8 FROM generate_series(1, 200) g;"

# load_shard DSN FIRST LAST LAYOUT: customers FIRST..LAST, 10 orders each, and their lines.
# Order ids are global (FIRST's shard offsets them); the customer of order o is a hash of o.
load_shard() {
  local n=$(($3 - $2 + 1)) order_by_c="" order_by_o="" order_by_l=""
  if [ "$4" = ordered ]; then
    order_by_o="ORDER BY 1, 2"; order_by_l="ORDER BY 1, 2, 3"
  elif [ "$4" = shuffled ]; then
    order_by_c="ORDER BY hashint8(c)"; order_by_o="ORDER BY hashint4(o::int)"
    order_by_l="ORDER BY hashint8(o.order_id::bigint * 8 + l)"
  else
    order_by_o="ORDER BY 2"; order_by_l="ORDER BY 2, 3"
  fi
  psql -XAtq -v ON_ERROR_STOP=1 "$1" <<SQL
SET session_replication_role = replica;
$schema_sql
INSERT INTO customers SELECT c, 'customer ' || c, 1 + c % 8, timestamptz '2024-01-01 00:00+00' + (c % 365) * interval '1 day'
  FROM generate_series($2::bigint, $3::bigint) c $order_by_c;
INSERT INTO orders
SELECT $2 + abs(hashint8(o::bigint)) % $n, o::int,
       timestamptz '2024-01-01 00:00+00' + (o - 10 * $2) * interval '1 second',
       (ARRAY['new', 'paid', 'shipped', 'delivered'])[1 + o % 4]
  FROM generate_series(10 * $2::bigint, 10 * $2::bigint + 10 * $n - 1) o $order_by_o;
INSERT INTO order_lines
SELECT o.customer_id, o.order_id, l, p, q, q * (1 + ((p * 7919) % 10000) / 100.0)
  FROM orders o, generate_series(1, 1 + abs(hashint4(o.order_id)) % 5) l,
       LATERAL (SELECT 1 + ((o.customer_id * 13 + o.order_id * 17 + l) % 200)::int AS p,
                       1 + ((o.customer_id + l) % 5)::int AS q) x $order_by_l;
VACUUM ANALYZE;
SQL
}

admin_dsn() { echo "$1" | sed 's/dbname=[^ ]*/dbname=postgres/'; }
db_of() { echo "$1" | sed 's/.*dbname=\([^ ]*\).*/\1/'; }

# load_hand LAYOUT: fleet hand_LAYOUT, loaded; every method runs on a clone of it.
load_hand() {
  local h=hand_$1 t0 p1
  "$bin/shardctl" sandbox fleet "$h" --dir "$work/sb" --shards 2 --empty --format json > "$work/$h.json"
  t0=$(now)
  load_shard "$(jq -r '.shards[0].dsn' "$work/$h.json")" 1 $((2 * C)) "$1" &
  p1=$!
  load_shard "$(jq -r '.shards[1].dsn' "$work/$h.json")" $((2 * C + 1)) $((4 * C)) "$1" &
  wait $p1
  wait $!
  echo "$1: loaded fleet $h in $(r "$(now) - $t0") s"
}

# clone LAYOUT NAME: fleet NAME, a file-for-file copy of hand_LAYOUT's shards.
clone() {
  local i dsn tdsn
  "$bin/shardctl" sandbox fleet "$2" --dir "$work/sb" --shards 2 --empty --format json > "$work/$2.json"
  for i in 0 1; do
    dsn=$(jq -r ".shards[$i].dsn" "$work/hand_$1.json"); tdsn=$(jq -r ".shards[$i].dsn" "$work/$2.json")
    psql -XAtq "$(admin_dsn "$tdsn")" -c "DROP DATABASE \"$(db_of "$tdsn")\"" \
      -c "CREATE DATABASE \"$(db_of "$tdsn")\" TEMPLATE \"$(db_of "$dsn")\""
  done
}

# register NAME: fleet NAME's catalog holds its two shards, the map and the tables.
register() {
  local sc="$bin/shardctl" i
  SHARDCTL_CATALOG=$(jq -r .catalog "$work/$1.json")
  export SHARDCTL_CATALOG
  "$sc" shard add shard_1 --dsn "$(jq -r '.shards[0].dsn' "$work/$1.json")" >/dev/null
  "$sc" shard add shard_2 --dsn "$(jq -r '.shards[1].dsn' "$work/$1.json")" >/dev/null
  "$sc" map create customers --kind range --key-type bigint >/dev/null
  "$sc" mapping add --map customers --range "..$((2 * C + 1))" --shard shard_1 >/dev/null
  "$sc" mapping add --map customers --range "$((2 * C + 1)).." --shard shard_2 >/dev/null
  "$sc" table add-reference public.region >/dev/null
  "$sc" table add-reference public.product >/dev/null
  for i in customers orders order_lines; do "$sc" table add-sharded "public.$i" --map customers --key customer_id >/dev/null; done
  "$sc" xref add order_lines_order --child 'public.order_lines(customer_id,order_id)' --parent 'public.orders(customer_id,order_id)' \
    --route customer_id --map customers >/dev/null
}

drop_fleet() {  # NAME: the fleet's databases dropped (disk and OS cache for what follows)
  local dsn
  while read -r dsn; do
    psql -XAtq "$(admin_dsn "$dsn")" -c "DROP DATABASE \"$(db_of "$dsn")\" WITH (FORCE)"
  done < <(jq -r '.catalog, .shards[].dsn' "$work/$1.json")
}

count_rows() {  # DSN LO HI: rows of the three tables in [LO, HI)
  psql -XAtc "select (select count(*) from customers where customer_id >= $2 and customer_id < $3)
    + (select count(*) from orders where customer_id >= $2 and customer_id < $3)
    + (select count(*) from order_lines where customer_id >= $2 and customer_id < $3)" "$1"
}

# Each method starts on a settled machine (bench/move_speed.sh): every database of the fleet
# vacuumed and analyzed, a checkpoint, no autovacuum worker left.
settle() {  # FLEET
  local dsn i
  while read -r dsn; do psql -XAtqc "VACUUM (ANALYZE)" "$dsn"; psql -XAtqc "CHECKPOINT" "$dsn"; done \
    < <(jq -r '.shards[].dsn' "$work/$1.json")
  for i in $(seq 1 600); do
    [ "$(psql -XAtc "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'" "$(jq -r '.shards[0].dsn' "$work/$1.json")")" = 0 ] &&
      [ "$(psql -XAtc "select count(*) from pg_stat_activity where backend_type = 'autovacuum worker'" "$(jq -r '.shards[1].dsn' "$work/$1.json")")" = 0 ] && return
    sleep 0.2
  done
}

# tool FLEET NAME ENV ARGS...: a split on FLEET (registered), its -v times, RSS and op show JSON.
tool() {
  local fleet=$1 name=$2 env=$3 op
  shift 3
  settle "$fleet"
  SHARDCTL_CATALOG=$(jq -r .catalog "$work/$fleet.json")
  export SHARDCTL_CATALOG
  env $env /usr/bin/time -f "%e %M" -o "$work/$name.time" "${tool_bin:-$bin}/shardctl" split --map customers "$@" -v \
    ${BENCH_PARALLEL:+--parallel $BENCH_PARALLEL} 2> "$work/$name.err" >/dev/null || { cat "$work/$name.err" >&2; exit 1; }
  op=$("${tool_bin:-$bin}/shardctl" op list --format json | jq -r '.operations[0].id')
  "${tool_bin:-$bin}/shardctl" op show "$op" --format json > "$work/$name.op"
}
phase() { sed -n "s/.*time: .*$2 \([0-9.]*\) s.*/\1/p" "$work/$1.err"; }
# median of the numbers on stdin, one per line
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
span() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }

rounds=${BENCH_ROUNDS:-3}
rows_out=()
ratios_out=()
for layout in "${layouts[@]}"; do
  load_hand "$layout"
  h1=$(jq -r '.shards[0].dsn' "$work/hand_$layout.json"); h2=$(jq -r '.shards[1].dsn' "$work/hand_$layout.json")
  rows1=$(count_rows "$h1" $r1_lo $r1_hi); rows2=$(count_rows "$h2" $r2_lo $r2_hi)
  echo "$layout: R1 = customers [$r1_lo, $r1_hi): $rows1 rows; R2 = [$r2_lo, $r2_hi): $rows2 rows"

  f=pipe_$layout
  clone "$layout" "$f"; settle "$f"
  p1=$(jq -r '.shards[0].dsn' "$work/$f.json"); p2=$(jq -r '.shards[1].dsn' "$work/$f.json")
  t0=$(now); pipe "$p1" "$p2" $r1_lo $r1_hi none ""; hand_copy=$(echo "$(now) - $t0" | bc -l)
  t0=$(now); delete_customers "$p1" $r1_lo $r1_hi; hand_delete=$(echo "$(now) - $t0" | bc -l)
  drop_fleet "$f"
  rows_out+=("| $layout | hand-made pipe + DELETE | R1, $rows1 | $(r "$hand_copy + $hand_delete") | $(r "$hand_copy") | - | $(r "$hand_delete") | - | - | - |")

  : > "$work/$layout.rounds"
  for round in $(seq 1 "$rounds"); do
    f=floors_${layout}_$round
    clone "$layout" "$f"; settle "$f"
    f1=$(jq -r '.shards[0].dsn' "$work/$f.json"); f2=$(jq -r '.shards[1].dsn' "$work/$f.json")
    t0=$(now); pipe "$f2" "$f1" $r2_lo $r2_hi pk "-c session_replication_role=replica"; load_floor=$(echo "$(now) - $t0" | bc -l)
    settle "$f"
    t0=$(now); PGOPTIONS="-c session_replication_role=replica" delete_customers "$f2" $r2_lo $r2_hi
    purge_floor=$(echo "$(now) - $t0" | bc -l)
    drop_fleet "$f"

    n=$layout.$round
    # base_run: the split by BENCH_BASE_BIN's shardctl on a clone of its own.
    base_run() {
      [ -n "${BENCH_BASE_BIN:-}" ] || return 0
      local f=base_${layout}_$round
      clone "$layout" "$f"; register "$f"
      tool_bin=$BENCH_BASE_BIN tool "$f" "$n.base" SHARDCTL_CHECKED_LOAD=0 --at $r2_hi --move lower --to shard_1
      [ "$(count_rows "$(jq -r '.shards[0].dsn' "$work/$f.json")" $r2_lo $r2_hi)" = "$rows2" ] ||
        { echo "the base build did not move every row of R2" >&2; exit 1; }
      drop_fleet "$f"
    }
    [ $((round % 2)) = 1 ] && base_run
    f=tool_${layout}_$round
    clone "$layout" "$f"; register "$f"
    t1=$(jq -r '.shards[0].dsn' "$work/$f.json"); t2=$(jq -r '.shards[1].dsn' "$work/$f.json")
    tool "$f" "$n.fast" SHARDCTL_CHECKED_LOAD=0 --at $r2_hi --move lower --to shard_1
    [ "$(count_rows "$t1" $r2_lo $r2_hi)" = "$rows2" ] && [ "$(count_rows "$t2" $r2_lo $r2_hi)" = 0 ] ||
      { echo "shardctl did not move every row of R2" >&2; exit 1; }
    names=(fast)
    if [ "${BENCH_CHECKED:-0}" = 1 ] && [ "$round" = 1 ]; then
      tool "$f" "$n.checked" SHARDCTL_CHECKED_LOAD=1 --at $r1_lo --to shard_2
      [ "$(count_rows "$t2" $r1_lo $r1_hi)" = "$rows1" ] || { echo "shardctl did not move every row of R1" >&2; exit 1; }
      names+=(checked)
    fi
    drop_fleet "$f"
    [ $((round % 2)) = 0 ] && base_run
    [ -n "${BENCH_BASE_BIN:-}" ] && names+=(base)

    rows_out+=("| $layout | round $round: load floor: PK-ordered pipe, FK skipped | R2, $rows2 | $(r "$load_floor") | $(r "$load_floor") | - | - | - | - | - |")
    rows_out+=("| $layout | round $round: purge floor: DELETE, FK skipped, one transaction | R2, $rows2 | $(r "$purge_floor") | - | - | $(r "$purge_floor") | - | - | - |")
    for m in "${names[@]}"; do
      read -r total rss < "$work/$n.$m.time"
      range=R2; rows=$rows2; [ "$m" = checked ] && { range=R1; rows=$rows1; }
      label="$m path"; [ "$m" = base ] && label="fast path, the BENCH_BASE_BIN build"
      rows_out+=("| $layout | round $round: shardctl, $label | $range, $rows | $(r "$total") | $(phase "$n.$m" copy) | $(phase "$n.$m" verify) ($(phase "$n.$m" 'beside purge')) | $(phase "$n.$m" purge) | $(phase "$n.$m" catalog) | $(jq -r .batches "$work/$n.$m.op") | $(r "$(jq -r .offline_median_seconds "$work/$n.$m.op")") / $(r "$(jq -r .offline_max_seconds "$work/$n.$m.op")") s |")
    done
    read -r fast_total _ < "$work/$n.fast.time"
    # One line per round: purge / purge floor, copy / load floor, whole / serial floor, whole /
    # hand pipe + DELETE, offline max.
    echo "$(r "$(phase "$n.fast" purge) / $purge_floor") $(r "$(phase "$n.fast" copy) / $load_floor") $(r "$fast_total / ($load_floor + $purge_floor)") $(r "$fast_total / ($hand_copy + $hand_delete)") $(r "$(jq -r .offline_max_seconds "$work/$n.fast.op")")" >> "$work/$layout.rounds"
    if [ -n "${BENCH_BASE_BIN:-}" ]; then  # the base build's whole move / serial floor
      read -r base_total _ < "$work/$n.base.time"
      echo "$(r "$base_total / ($load_floor + $purge_floor)")" >> "$work/$layout.base"
      echo "$layout round $round: the BENCH_BASE_BIN build $(r "$base_total") s ($(grep 'time:' "$work/$n.base.err" | tail -1))"
    fi
    echo "$layout round $round: load floor $(r "$load_floor") s, purge floor $(r "$purge_floor") s, shardctl $(r "$fast_total") s ($(grep 'time:' "$work/$n.fast.err" | tail -1)); load $(cut -d' ' -f1 /proc/loadavg)"
  done
  col() { cut -d' ' -f"$1" "$work/$layout.rounds"; }
  ratios_out+=("$layout, median of $rounds round(s) (range): fast purge / purge floor $(col 1 | median)x ($(col 1 | span); target <= 1.5); fast copy / load floor $(col 2 | median)x ($(col 2 | span)); whole move / serial floor $(col 3 | median)x ($(col 3 | span); target <= 1.2, goal <= 1.0); whole move / hand pipe + DELETE $(col 4 | median)x; offline max $(col 5 | span) s")
  [ -n "${BENCH_BASE_BIN:-}" ] &&
    ratios_out+=("$layout, the BENCH_BASE_BIN build: whole move / serial floor $(median < "$work/$layout.base")x ($(span < "$work/$layout.base"))")
  grep -h "path:\|verify:\|read:" "$work/$layout.1.fast.err" | sed "s/^/  $layout: /"
  drop_fleet "hand_$layout"
done

echo "uptime at end: $(uptime)"
echo
echo "| layout | method | range, rows | total s | copy s | verify s (beside purge) | purge s | catalog s | batches | offline median / max |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows_out[@]}"
echo
printf '%s\n' "${ratios_out[@]}"
