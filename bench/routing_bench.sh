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
# Its fence lifted, as fence_grace does (the floor stays): the version check is measured in the
# state a shard keeps for good. While a fence stands, the guard's statement trigger costs every
# write of the map on that shard about 1 ms, with or without a version (bench/README.md).
"$bin/shardctl" op unfence "$("$bin/shardctl" op list --format json | jq -r '[.operations[] | select(.kind == "split")][0].id')" -y >/dev/null

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

# Each figure next to its target as a ratio: "Nx under" (or "Nx over").
echo "| mode | route p50 / p99 (range) | route p50 (hash) | one-row INSERT p50 | route / INSERT (target < 5%) | version check added, shard with a floor (target < 0.1 ms) | same, shard without one | commit -> cache p50 / max (target < 50 ms) | flip -> first ack (target < 250 ms) |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in direct pgbouncer; do
  jq -r 'def r2: . * 100 | round / 100; def vs($t): if . <= 0 then "no cost measurable" elif . <= $t then "\($t / . | r2)x under" else "\(. / $t | r2)x over" end;
    "| \(.mode) | \(.route_range.p50_us | r2) / \(.route_range.p99_us | r2) us | \(.route_hash.p50_us | r2) us | \(.insert.p50_us | round) us | \(.route_range.ratio_to_insert_p50 * 100 | r2)% (range), \(.route_hash.ratio_to_insert_p50 * 100 | r2)% (hash): \(.route_hash.ratio_to_insert_p50 | vs(0.05)) | \(.check.added_ms * 1000 | round) us (\(.check.without_p50_us | round) -> \(.check.with_p50_us | round) us, floor \(.check.floor)): \(.check.added_ms | vs(0.1)) | \(.check_nofloor.added_ms * 1000 | round) us (\(.check_nofloor.without_p50_us | round) -> \(.check_nofloor.with_p50_us | round) us): \(.check_nofloor.added_ms | vs(0.1)) | \(.notice.commit_to_cache_p50_ms | r2) / \(.notice.commit_to_cache_max_ms | r2) ms: \(.notice.commit_to_cache_p50_ms | vs(50)) | \(.flip.flip_to_first_ack_ms | r2) ms (\(.flip.from) -> \(.flip.to)): \(.flip.flip_to_first_ack_ms | vs(250)) |"' "$work/$m.json"
done
cat "$work/direct.json" "$work/pgbouncer.json" > "${ROUTING_BENCH_JSON:-/dev/null}"
