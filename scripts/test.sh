#!/usr/bin/env bash
# Builds shardctl and runs every test: unit tests and integration tests against real
# PostgreSQL clusters that the suite starts itself. Usage:
#   scripts/test.sh                 release, then asan (what CI runs)
#   scripts/test.sh release|asan... only those builds
#   scripts/test.sh unit            the quick loop: build the release unit tests, run `ctest -L unit`
# Ends with one table: each build's configure+build time, each test run's wall time and the
# 15 slowest tests (tests/README.md explains the budget each part has).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS
bash scripts/install-deps.sh
install_s=$((SECONDS - started))

presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(release asan)
jobs=$(nproc)
# Integration tests spend much of their time waiting on PostgreSQL (fsync, lock waits,
# pauses): CTest runs more of them than there are cores (tests/README.md, "Time").
test_jobs=$((jobs * 2))

timings=()   # "what|seconds" rows of the summary
junits=()    # (preset junit.xml) pairs for the slowest-tests table
rc=0

summary() {
  echo
  echo "== time (seconds; $jobs cores)"
  printf '%-34s %6s\n' "deps" "$install_s"
  local row
  for row in "${timings[@]}"; do printf '%-34s %6s\n' "${row%%|*}" "${row#*|}"; done
  printf '%-34s %6s\n' "total" "$((SECONDS - started))"
  if [ ${#junits[@]} -gt 0 ]; then
    echo
    echo "== 15 slowest tests"
    local i
    for ((i = 0; i < ${#junits[@]}; i += 2)); do
      [ -f "${junits[i + 1]}" ] || continue
      # CTest's JUnit file has one <testcase name="..." ... time="..."> per test.
      grep -o '<testcase name="[^"]*"[^>]*time="[0-9.]*"' "${junits[i + 1]}" |
        sed -E "s/<testcase name=\"([^\"]*)\".*time=\"([0-9.]*)\"/\2 ${junits[i]} \1/"
    # awk reads to the end: `head` would close the pipe early, and under pipefail sort's
    # SIGPIPE (exit 141) turned a green run red.
    done | sort -rn | awk 'NR <= 15 { printf "%8.1f  %-8s %s\n", $1, $2, $3 }'
  fi
}

for preset in "${presets[@]}"; do
  if [ "$preset" = unit ]; then
    s=$SECONDS
    cmake --preset release >/dev/null
    cmake --build --preset release -j "$jobs" --target unit_tests
    timings+=("unit: build|$((SECONDS - s))")
    s=$SECONDS
    ctest --preset release -L unit -j "$jobs" || rc=$?
    timings+=("unit: tests|$((SECONDS - s))")
    continue
  fi
  echo "== $preset build"
  s=$SECONDS
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  timings+=("$preset: configure + build|$((SECONDS - s))")
  echo "== $preset tests"
  junit="$root/build/$preset/ctest-junit.xml"
  rm -f "$junit"
  s=$SECONDS
  ctest --preset "$preset" -j "$test_jobs" --output-junit "$junit" || rc=$?
  timings+=("$preset: tests|$((SECONDS - s))")
  junits+=("$preset" "$junit")
  [ "$rc" = 0 ] || break
done
summary
exit "$rc"
