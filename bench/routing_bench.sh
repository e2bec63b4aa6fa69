#!/usr/bin/env bash
# bench/routing_bench.sh [BIN_DIR]: the Python routing client's costs (bench/routing_bench.py),
# directly and through a PgBouncer 1.18 in transaction pooling (default_pool_size 1 per
# shard), on a sandbox of its own. Prints one table row per measure, each next to its
# target as a ratio; bench/README.md ("routing client") keeps the figures.
source "$(dirname "$0")/lib.sh" "${1:-}"
PY=${SHARDCTL_CLIENT_PYTHON:-/usr/bin/python3}
sandbox_up --no-fleet
"$bin/shardctl" sandbox fleet rbench --dir "$work/sb" --shards 4 --scale 1 --format json > "$work/fleet.json"
export SHARDCTL_CATALOG=$(jq -r .catalog "$work/fleet.json")
"$bin/shardctl" map create bench_hash --kind hash --key-type bigint --shards shard_1,shard_2,shard_3,shard_4 >/dev/null
# A route floor on shard_2 (with the shard side of the contract): keys 400..501 moved off it.
"$bin/shardctl" split --map customers --at 400 --to shard_4 --batch-size 100000 >/dev/null

# PgBouncer: as the sandbox's user when root (it refuses root), sockets in $work/pgb.
pgb=$work/pgb
mkdir -p "$pgb"
user=$(id -un); [ "$(id -u)" -ne 0 ] || user=${SHARDCTL_SANDBOX_USER:-postgres}
{
  echo "[databases]"
  jq -r '.shards[] | "\(.name) = \(.dsn)"' "$work/fleet.json"
  printf '[pgbouncer]\nlisten_addr =\nlisten_port = 6432\nunix_socket_dir = %s\nauth_type = trust\nauth_file = %s/userlist.txt\n' "$pgb" "$pgb"
  printf 'pool_mode = transaction\ndefault_pool_size = 1\nmax_client_conn = 200\nlogfile = %s/pgbouncer.log\npidfile = %s/pgbouncer.pid\n' "$pgb" "$pgb"
  printf 'ignore_startup_parameters = extra_float_digits,options\n'
} > "$pgb/pgbouncer.ini"
printf '"postgres" ""\n' > "$pgb/userlist.txt"
chown -R "$user" "$pgb" 2>/dev/null || true
if [ "$(id -u)" -eq 0 ]; then runuser -u "$user" -- /usr/sbin/pgbouncer -d "$pgb/pgbouncer.ini"; else /usr/sbin/pgbouncer -d "$pgb/pgbouncer.ini"; fi
trap 'kill $(cat "$pgb/pgbouncer.pid") 2>/dev/null; "$bin/shardctl" sandbox down --dir "$work/sb" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
for i in $(seq 50); do psql -XAtq "host=$pgb port=6432 user=postgres dbname=shard_1" -c "select 1" >/dev/null 2>&1 && break; sleep 0.1; done

"$PY" "$here/bench/routing_bench.py" direct "$SHARDCTL_CATALOG" "$bin" > "$work/direct.json"
for s in $(jq -r '.shards[].name' "$work/fleet.json"); do
  psql -XAtq "$SHARDCTL_CATALOG" -c "update shardctl.shards set app_dsn = 'host=$pgb port=6432 user=postgres dbname=$s' where name = '$s'"
done
"$PY" "$here/bench/routing_bench.py" pgbouncer "$SHARDCTL_CATALOG" "$bin" > "$work/pgbouncer.json"

echo "| mode | route p50 / p99 (range) | route p50 (hash) | one-row INSERT p50 | route / INSERT (target < 5%) | version check added (target < 0.1 ms) | commit -> cache p50 / max (target < 50 ms) | flip -> first ack (target < 250 ms) |"
echo "|---|---|---|---|---|---|---|---|"
for m in direct pgbouncer; do
  jq -r '"| \(.mode) | \(.route_range.p50_us | . * 100 | round / 100) / \(.route_range.p99_us | . * 100 | round / 100) us | \(.route_hash.p50_us | . * 100 | round / 100) us | \(.insert.p50_us | round) us | \(.route_range.ratio_to_insert_p50 * 1000 | round / 10)% (range), \(.route_hash.ratio_to_insert_p50 * 1000 | round / 10)% (hash): \(0.05 / .route_range.ratio_to_insert_p50 | . * 10 | round / 10)x under | \(.check.added_ms * 1000 | round / 1000) ms (\(.check.without_p50_us | round) -> \(.check.with_p50_us | round) us; floor \(.check_floor)): \(if .check.added_ms > 0 then (0.1 / .check.added_ms | . * 10 | round / 10 | tostring) + "x under" else "no cost measurable" end) | \(.notice.commit_to_cache_p50_ms | . * 100 | round / 100) / \(.notice.commit_to_cache_max_ms | . * 10 | round / 10) ms: \(50 / .notice.commit_to_cache_p50_ms | round)x under | \(.flip.flip_to_first_ack_ms | . * 10 | round / 10) ms (\(.flip.from) -> \(.flip.to)): \(250 / .flip.flip_to_first_ack_ms | . * 10 | round / 10)x under |"' "$work/$m.json"
done
cat "$work/direct.json" "$work/pgbouncer.json" > "${ROUTING_BENCH_JSON:-/dev/null}"
