#!/usr/bin/env bash
# Builds shardctl, brings up the sandbox (local clusters with sample data) and runs a short
# tour of what shardctl does: routing, a split, a merge, a move, the operations journal.
# Safe to run twice: it starts from a fresh sandbox every time.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== checking the build dependencies (Debian packages; installed where missing)"
bash scripts/install-deps.sh
echo "== building shardctl (release, build/release; about 2 minutes on a fresh machine, seconds after)"
cmake --preset release >/dev/null
# Ninja's own progress: one "[done/total]" line per step when not on a terminal, a single
# updating line when on one. Warnings and errors show as they come.
cmake --build --preset release -j "$(nproc)"
echo "== built; the tour starts: each command as you would type it, then its output"
export PATH="$PWD/build/release/bin:$PATH"

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@"; }
# Shows a command that is expected to exit non-zero (a refusal, a check with findings).
nonzero() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; "$@" || echo "(exit $?)"; }

shardctl sandbox status >/dev/null 2>&1 && step shardctl sandbox down
step shardctl sandbox up
step shardctl init
step shardctl shard list
step shardctl map show customers
step shardctl lookup --map customers 1 250 999 5000
shardctl map show tenants >/dev/null 2>&1 ||
  step shardctl map create tenants --kind hash --key-type text --shards shard_1,shard_2,shard_3,shard_4
step shardctl lookup --map tenants acme globex initech
nonzero shardctl mapping add --map customers --range 100..300 --shard shard_2
nonzero shardctl lookup --map customers abc
step shardctl table list
step shardctl xref list
step shardctl split --map customers --at 200 --to shard_3 --dry-run
step shardctl split --map customers --at 200 --to shard_3 --batch-size 20
step shardctl merge --map customers --range 200..600 --into shard_3 --batch-size 50
step shardctl move --map customers --key 900 --to shard_1
nonzero shardctl move --map customers --key 900 --to shard_1
step shardctl map show customers
step shardctl op list
step shardctl check
# Applications route by the map themselves (shardctl-routing(7)): the catalog answers with the
# shard, the address to use and the map's version; shard_4, which gave key 900 away, refuses a
# transaction that states the version from before the move (constraint shardctl_stale_route).
catalog=$(shardctl sandbox env | sed -n "s/^export PGDATABASE='\(.*\)'$/\1/p")
route_sql="select shard, version from shardctl.route('customers', 900)"
printf '\n%s$ psql -c "%s"%s\n' "$bold" "$route_sql" "$plain"
( eval "$(shardctl sandbox env)"; psql -X -c "$route_sql" "$catalog" )
shard_4=$(shardctl shard show shard_4 --format json | jq -r .dsn)
stale="begin; set local shardctl.route = 'customers:1'; insert into customers values (901, 'stale', 1, now()); rollback"
printf '\n%s$ psql "%s" -c "%s"%s\n' "$bold" "$shard_4" "$stale" "$plain"
psql -X -q "$shard_4" -c "$stale" 2>&1 | head -3 || true
# Damage one shard behind shardctl's back: an order deleted with its FK checks switched off
# leaves its order_lines orphaned. check finds them (exit 2: critical), quarantine fixes it.
dsn=$(shardctl shard show shard_1 --format json | jq -r .dsn)
printf '\n%s$ psql "%s" -c "...delete an order, FK checks off..."%s\n' "$bold" "$dsn" "$plain"
psql -X -q "$dsn" -c "set session_replication_role = replica; delete from orders where customer_id = 7 and order_id = 1"
nonzero shardctl check --orphans
nonzero shardctl check --orphans --fix quarantine --yes
step shardctl check
# Archive: cold orders with their lines leave every shard for a directory of zstd COPY files,
# verified; then they come back to the shards the map routes them to now.
archive_dir=$(mktemp -d /tmp/shardctl-demo-archive.XXXXXX)
step shardctl archive run --table orders --where "ordered_at < '2024-02-01'" --cascade --to "dir:$archive_dir" --dry-run
step shardctl archive run --table orders --where "ordered_at < '2024-02-01'" --cascade --to "dir:$archive_dir"
run=$(shardctl op list --format json | jq -r '[.operations[] | select(.kind == "archive")][0].id')
step shardctl archive show "$run"
step shardctl archive restore "$run"
rm -rf "$archive_dir"
echo
echo "The sandbox keeps running. Try: eval \"\$(shardctl sandbox env)\"; psql -c '\\l'"
echo "Remove it with: shardctl sandbox down"
