# The parser is the one definition of every command: every built family is in shardctl(1)
# (the build generates its list from the families' definitions) with its own summary, and
# every command and long option in --help appears in the family's man page and in every
# completion file the build generated.
source "$(dirname "$0")/lib.sh"
src=$SHARDCTL_SOURCE_DIR
built=$SHARDCTL_BIN/..
completions=$built/completions

# Man page source as plain text: roff escapes for '-' and font changes removed.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1"; }
[ -f "$built/share/man/man1/shardctl.1" ] || fail "the build made no share/man/man1/shardctl.1"
plain "$built/share/man/man1/shardctl.1" > "$TEST_TMP/shardctl.txt"
! grep -n "@SHARDCTL_" "$TEST_TMP/shardctl.txt" || fail "shardctl.1 has an unfilled placeholder"

# Global options (those of every family's root; shardctl-shard's root has no other) are
# documented once, in shardctl(1).
globals=$("$SHARDCTL_BIN/shardctl-shard" --help-spec | jq -r '.options[] | select(.positional == null) | .names[]')
is_global() { grep -qxF -- "$1" <<<"$globals"; }

problems=0
problem() { echo "  $*" >&2; problems=$((problems + 1)); }
for b in "$SHARDCTL_BIN"/shardctl-*; do
  family=${b##*/shardctl-}
  page="$src/man/shardctl-$family.1"
  [ -f "$page" ] || { problem "no man page man/shardctl-$family.1"; continue; }
  plain "$page" > "$TEST_TMP/page.txt"
  grep -qE "^\.B $family$|^\.B $family " "$TEST_TMP/shardctl.txt" || problem "shardctl.1 does not list the command $family"
  "$b" --help-spec > "$TEST_TMP/spec.json"
  summary=$(jq -r .description "$TEST_TMP/spec.json")
  grep -A1 -xF ".B $family" "$TEST_TMP/shardctl.txt" | grep -qF -- "$summary" ||
    problem "shardctl.1 does not give $family the summary its parser has: $summary"
  grep -qF "shardctl-$family(1)" "$TEST_TMP/shardctl.txt" || problem "shardctl.1 does not refer to shardctl-$family(1)"
  for cmd in $(jq -r '.commands[].name' "$TEST_TMP/spec.json"); do
    grep -qE "shardctl $family $cmd\b|^\.B $cmd\b|^\.B shardctl $family $cmd" "$TEST_TMP/page.txt" ||
      problem "man/shardctl-$family.1 does not describe the command '$cmd'"
  done
  for opt in $(jq -r '[.options[], .commands[].options[]] | map(select(.positional == null)) | .[].names[] | select(startswith("--"))' "$TEST_TMP/spec.json" | sort -u); do
    page_opt_in="$TEST_TMP/page.txt" page_name="man/shardctl-$family.1"
    is_global "$opt" && page_opt_in="$TEST_TMP/shardctl.txt" page_name="man/shardctl.1"
    grep -qF -- "$opt" "$page_opt_in" || problem "option $opt of shardctl $family is not in $page_name"
    for f in shardctl.bash _shardctl shardctl.fish; do
      needle=$opt
      [ "$f" = shardctl.fish ] && needle="-l ${opt#--}"
      grep -qF -- "$needle" "$completions/$f" || problem "option $opt of shardctl $family is not in the generated $f"
    done
  done
done
[ -f "$src/man/shardctl.toml.5" ] || problem "no man page man/shardctl.toml.5"
[ "$problems" -eq 0 ] || fail "$problems disagreement(s) between --help, man pages and completions"
pass
