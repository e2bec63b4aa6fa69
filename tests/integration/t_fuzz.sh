# The CLI fuzz harness (tests/fuzz/README.md), short and deterministic: a fixed seed and a fixed
# number of cases (about 2 minutes on the ASan build of a 2-core machine; the release build is
# faster) against a fresh sample fleet. It fails on any exit 70, signal (a closed stdout pipe
# included), sanitizer report, hang or runaway memory, password printed or stored, or exit code
# outside the set shardctl(1) documents; its log shows each failing case with its seed and case number.
source "$(dirname "$0")/lib.sh"

# tests/fuzz/CMakeLists.txt builds the harness into <build>/tests/fuzz, beside <build>/bin
# ($SHARDCTL_BIN), not in it: a shardctl-* file in bin/ would be a `shardctl` command.
FUZZ="$SHARDCTL_BIN/../tests/fuzz/shardctl-cli-fuzz"
[ -x "$FUZZ" ] || fail "no fuzz harness at $FUZZ (tests/fuzz/CMakeLists.txt builds it)"

# The sample fleet (customers range map over 4 shards, tables, an xref); the harness adds its
# own fz_<type>_<kind> maps of every key type and kind, with mappings, through the CLI.
fresh_fleet fuzz

SEED=20240917
CASES=${SHARDCTL_FUZZ_CASES:-300}
LOG="$TEST_TMP/fuzz.log"
status=0
# The hang guard: 30 s, far above any case's need. At 10 s, the ASan build's 30,000-key JSON
# lookup into a closed pipe (about 3.5 s a case) was killed as hung in 2 of 3 runs on 2 cores.
"$FUZZ" --bin "$SHARDCTL_BIN" --seed "$SEED" --cases "$CASES" --timeout 30 --workdir "$TEST_TMP/work" \
  >"$LOG" 2>&1 || status=$?
if [ "$status" != 0 ]; then
  cat "$LOG" >&2
  fail "the fuzz harness found failures (exit $status; seed $SEED, $CASES cases; log $LOG)"
fi
sed -n '/^shardctl-cli-fuzz: seed/,$p' "$LOG"
pass
