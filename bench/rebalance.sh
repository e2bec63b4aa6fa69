#!/usr/bin/env bash
# Benchmark: rebalance plan quality against the lower bound and a Citus-style greedy baseline,
# and planning at scale (100,000 mappings over 256 shards). Pure planner code, no database.
# Builds bench/rebalance_quality.cpp against the release build's static libraries (run
# `cmake --build --preset release` first); not part of the default build.
# Usage: bench/rebalance.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/release}
out=$(mktemp -d /tmp/shardctl-rebalance.XXXXXX)
trap 'rm -rf "$out"' EXIT
g++ -std=c++20 -O2 -DNDEBUG -Wall -Wextra -Werror -I"$here/lib" "$here/bench/rebalance_quality.cpp" \
  "$build/lib/planner/libshardctl_planner.a" "$build/lib/routing/libshardctl_routing.a" -lfmt -o "$out/rebalance_quality"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$out/rebalance_quality" quality
echo
echo "### Planning at scale (100,000 mappings with 8 histogram slices, 256 shards; one process each)"
echo
echo "| fleet | plan time | steps | bytes moved vs bound | max/mean before -> after | peak RSS |"
echo "|---|---|---|---|---|---|"
"$out/rebalance_quality" scale-skewed
"$out/rebalance_quality" scale-balanced
