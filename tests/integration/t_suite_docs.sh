# tests/README.md says which shell tests the sanitizer build runs and, for every one it skips,
# which test of its family the sanitizer build runs instead. This keeps that page true: every
# shell test is either in SANITIZER_IT_SCRIPTS (tests/CMakeLists.txt) or named in the README's
# table of skipped tests, and every name in SANITIZER_IT_SCRIPTS is a test that exists.
source "$(dirname "$0")/lib.sh"
src=$SHARDCTL_SOURCE_DIR

step "the sanitizer list"
sanitizer=$(sed -n '/^set(SANITIZER_IT_SCRIPTS/,/)/p' "$src/tests/CMakeLists.txt" |
  sed -e 's/set(SANITIZER_IT_SCRIPTS//' -e 's/)//' | tr -s ' \n' '\n' | grep -v '^$' | sort -u)
[ "$(wc -l <<<"$sanitizer")" -ge 20 ] || fail "read only $(wc -l <<<"$sanitizer") names from SANITIZER_IT_SCRIPTS"
for name in $sanitizer; do
  [ -f "$src/tests/integration/$name.sh" ] || fail "SANITIZER_IT_SCRIPTS names $name, which is not a test"
done

step "every skipped test is named in tests/README.md"
# The README's "skipped in asan" table: its rows start with "| `t_".
skipped_table=$(sed -n '/^| skipped in asan/,/^$/p' "$src/tests/README.md")
[ -n "$skipped_table" ] || fail "tests/README.md has no \"skipped in asan\" table"
missing=()
for f in "$src"/tests/integration/t_*.sh; do
  name=$(basename "$f" .sh)
  grep -qx "$name" <<<"$sanitizer" && continue
  grep -qF "\`$name\`" <<<"$(cut -d'|' -f2 <<<"$skipped_table")" || missing+=("$name")
done
[ ${#missing[@]} -eq 0 ] ||
  fail "tests/README.md's \"skipped in asan\" table does not name: ${missing[*]} (say which asan test covers each)"

pass
