#!/usr/bin/env bash
# Builds shardctl and runs every test: unit tests and integration tests against real
# PostgreSQL clusters that the suite starts itself. Usage: scripts/test.sh [release|asan]...
# (default: release, then asan).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(release asan)
jobs=$(nproc)
for preset in "${presets[@]}"; do
  echo "== $preset build"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset tests"
  ctest --preset "$preset" -j "$jobs"
done
