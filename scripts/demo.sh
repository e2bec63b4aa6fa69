#!/usr/bin/env bash
# Builds shardctl, brings up the sandbox (local clusters with sample data) and runs a short
# tour of what shardctl does: routing, a split, a merge, a move, the operations journal.
# Safe to run twice: it starts from a fresh sandbox every time.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" >/dev/null
export PATH="$PWD/build/release/bin:$PATH"

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@"; }
refused() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@" || echo "(exit $?: refused, nothing changed)"; }

shardctl sandbox status >/dev/null 2>&1 && step shardctl sandbox down
step shardctl sandbox up
step shardctl init
step shardctl shard list
step shardctl map show customers
step shardctl lookup --map customers 1 250 999 5000
shardctl map show tenants >/dev/null 2>&1 ||
  step shardctl map create tenants --kind hash --key-type text --shards shard_1,shard_2,shard_3,shard_4
step shardctl lookup --map tenants acme globex initech
refused shardctl mapping add --map customers --range 100..300 --shard shard_2
refused shardctl lookup --map customers abc
step shardctl table list
step shardctl xref list
step shardctl split --map customers --at 200 --to shard_3 --dry-run
step shardctl split --map customers --at 200 --to shard_3 --batch-size 20
step shardctl merge --map customers --range 200..600 --into shard_3 --batch-size 50
step shardctl move --map customers --key 900 --to shard_1
refused shardctl move --map customers --key 900 --to shard_1
step shardctl map show customers
step shardctl op list
echo
echo "The sandbox keeps running. Try: eval \"\$(shardctl sandbox env)\"; psql -c '\\l'"
echo "Remove it with: shardctl sandbox down"
