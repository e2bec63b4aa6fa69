#!/usr/bin/env bash
# Benchmark: `shardctl lookup --map M -` over 10,000,000 bigint keys, against a map of 10,000
# ranges and one of 10,000 list points, compared in the same run with `cut -f1` over the same
# file (the I/O floor). Usage: bench/lookup.sh [BUILD_BIN_DIR] [KEYS]
# Needs PostgreSQL server binaries; brings up its own sandbox under a temp dir and removes it.
source "$(dirname "$0")/lib.sh" "${1:-}"
keys=${2:-10000000}

sandbox_up --no-fleet
catalog=$("$bin/shardctl" sandbox fleet bench --dir "$work/sb" --empty --shards 4)
export SHARDCTL_CATALOG="$catalog"
sc() { "$bin/shardctl" "$@"; }
for i in 1 2 3 4; do sc shard add "shard_$i" --dsn "host=/nonexistent dbname=s$i" >/dev/null; done
sc map create ranges --kind range --key-type bigint >/dev/null
sc map create points --kind list --key-type bigint >/dev/null

# 10,000 mappings each, written with plain SQL (10,000 CLI calls would measure process start-up).
psql -X -q "$catalog" <<'SQL'
INSERT INTO shardctl.mappings (map_id, shard_id, int_range)
SELECT (SELECT map_id FROM shardctl.maps WHERE name = 'ranges'),
       (SELECT shard_id FROM shardctl.shards WHERE name = 'shard_' || (1 + i % 4)),
       int8range(CASE WHEN i = 0 THEN NULL ELSE i::bigint * 1000000 END,
                 CASE WHEN i = 9999 THEN NULL ELSE (i + 1)::bigint * 1000000 END)
FROM generate_series(0, 9999) i;
INSERT INTO shardctl.mappings (map_id, shard_id, is_point, int_range)
SELECT (SELECT map_id FROM shardctl.maps WHERE name = 'points'),
       (SELECT shard_id FROM shardctl.shards WHERE name = 'shard_' || (1 + i % 4)),
       true, int8range(i::bigint * 1000, i::bigint * 1000, '[]')
FROM generate_series(0, 9999) i;
SQL

# Keys: ranges file spread over the whole mapped space; points file drawn from the points.
awk -v n="$keys" 'BEGIN { srand(42); for (i = 0; i < n; i++) printf "%.0f\n", int(rand() * 1e10) }' > "$work/range-keys"
awk -v n="$keys" 'BEGIN { srand(43); for (i = 0; i < n; i++) printf "%.0f\n", int(rand() * 10000) * 1000 }' > "$work/point-keys"

measure() {  # prints seconds taken by "$@"
  local t0 t1; t0=$(now); "$@" >/dev/null; t1=$(now); echo "$t1 - $t0" | bc -l
}
report() {
  local name=$1 file=$2 map=$3
  cat "$file" >/dev/null  # warm the page cache
  local floor tool
  floor=$(measure cut -f1 "$file")
  tool=$(measure sh -c "'$bin/shardctl' lookup --map $map - < '$file'")
  printf '%-22s %8.2f s  %10.0f keys/s   cut -f1: %6.2f s   ratio %.2fx\n' "$name" "$tool" \
    "$(echo "$keys / $tool" | bc -l)" "$floor" "$(echo "$tool / $floor" | bc -l)"
}
echo "keys: $keys   cpu: $(nproc) cores   $(date -u +%F)"
report "10,000 ranges" "$work/range-keys" ranges
report "10,000 list points" "$work/point-keys" points
# Peak memory of the ranges run.
/usr/bin/time -f "peak RSS (ranges run): %M KiB" "$bin/shardctl-lookup" --map ranges - < "$work/range-keys" >/dev/null
