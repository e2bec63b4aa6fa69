# The bash, zsh and fish completions the build generates agree with every command's own parser: the options
# of each command, the values each one's parser accepts (check --format offers nagios, split
# --format does not), the subcommands; and map, shard and operation names come from the
# catalog when it answers, quickly and silently nothing when it does not.
source "$(dirname "$0")/lib.sh"
comp_file="$SHARDCTL_BIN/../completions/shardctl.bash"
[ -f "$comp_file" ] || fail "the build made no bash completion ($comp_file)"

# Runs bash completion once per input line (the words of a command line; the last one is
# completed) in one bash, printing the sorted candidates of each on one line.
run_completions() {
  PATH="$SHARDCTL_BIN:/usr/bin:/bin" bash -c '
    source /usr/share/bash-completion/bash_completion
    source "$1"
    while IFS= read -r line; do
      eval "COMP_WORDS=($line)"
      COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=${COMP_WORDS[*]}; COMP_POINT=${#COMP_LINE}
      COMPREPLY=(); _shardctl
      printf "%s\n" "${COMPREPLY[@]}" | sort -u | grep -v "^$" | tr "\n" " "; echo
    done' _ "$comp_file"
}
complete_line() { printf '%s\n' "$1" | run_completions | sed 's/ $//'; }

# The two cases the issue names.
assert_contains "$(complete_line 'shardctl check --format ""')" "nagios"
got=$(complete_line 'shardctl split --format ""')
[[ $got != *nagios* ]] || fail "split --format offers nagios, which split refuses: $got"
assert_eq "$got" "json text"
assert_eq "$(complete_line 'shardctl query --format ""')" "csv json text"

# Every family and command against its parser (--help-spec): its long options, each
# enumerated option's values, its subcommands. Queries and expectations come from the spec;
# the answers from the completion.
for b in "$SHARDCTL_BIN"/shardctl-*; do "$b" --help-spec; done | jq -s . > "$TEST_TMP/spec.json"
jq -r '
  def named: map(select(.positional == null));
  def longs: [.[] | .names[] | select(startswith("--"))];
  .[] | .family as $f | (.options | named) as $root |
  (if (.commands | length) == 0 then [{name: null, options: []}] else .commands end)[] |
  (if .name then "\($f) \(.name)" else $f end) as $at |
  ($root + (.options | named)) as $opts |
  "shardctl \($at) --\t\($opts | longs | unique | sort | join(" "))",
  ($opts[] | select(.takes_value and ((.values // []) | length) > 0) |
    "shardctl \($at) \(.names[-1]) \"\"\t\(.values | unique | sort | join(" "))")
  ' "$TEST_TMP/spec.json" > "$TEST_TMP/cases"
jq -r '.[] | select((.commands | length) > 0) | "shardctl \(.family) \"\"\t\([.commands[].name] | unique | sort | join(" "))"' \
  "$TEST_TMP/spec.json" >> "$TEST_TMP/cases"
echo "shardctl \"\"	$(jq -r '[.[].family, "help"] | unique | sort | join(" ")' "$TEST_TMP/spec.json")" >> "$TEST_TMP/cases"
cut -f1 "$TEST_TMP/cases" | run_completions | sed 's/ $//' > "$TEST_TMP/answers"
problems=0
while IFS=$'\t' read -r query want && IFS= read -r got <&3; do
  [ "$got" = "$want" ] || { echo "  $query: completion offers [$got], the parser has [$want]" >&2; problems=$((problems + 1)); }
done < "$TEST_TMP/cases" 3< "$TEST_TMP/answers"
[ "$(wc -l < "$TEST_TMP/cases")" -gt 50 ] || fail "too few completion cases: $(wc -l < "$TEST_TMP/cases")"
[ "$problems" -eq 0 ] || fail "$problems disagreement(s) between the bash completion and the parsers"

# The same cases through zsh (a real interactive zsh driving the generated _shardctl) and fish
# (`complete -C`): the installed completions of all three shells agree with the parsers.
cut -f1 "$TEST_TMP/cases" | sed 's/ ""$/ /' > "$TEST_TMP/lines"
compare_shell() {  # SHELL ANSWERS
  local problems=0 query want got
  while IFS=$'\t' read -r query want && IFS= read -r got <&3; do
    [ "$got" = "$want" ] || { echo "  $1: $query: completion offers [$got], the parser has [$want]" >&2; problems=$((problems + 1)); }
  done < "$TEST_TMP/cases" 3< "$2"
  [ "$(wc -l < "$2")" -eq "$(wc -l < "$TEST_TMP/cases")" ] || fail "$1 answered $(wc -l < "$2") of $(wc -l < "$TEST_TMP/cases") cases"
  [ "$problems" -eq 0 ] || fail "$problems disagreement(s) between the $1 completion and the parsers"
}
PATH="$SHARDCTL_BIN:/usr/bin:/bin" TMPDIR=$TEST_TMP timeout 120 zsh -f "$(dirname "$0")/zsh_complete.zsh" \
  "$SHARDCTL_BIN/../completions" < "$TEST_TMP/lines" > "$TEST_TMP/zsh.answers" || fail "the zsh completion run failed"
compare_shell zsh "$TEST_TMP/zsh.answers"
PATH="$SHARDCTL_BIN:/usr/bin:/bin" fish --no-config -c '
  source $argv[1]
  while read -l line
    set -l got (complete -C "$line" | string replace -r "\t.*" "" | sort -u)
    echo "$got"
  end' "$SHARDCTL_BIN/../completions/shardctl.fish" < "$TEST_TMP/lines" > "$TEST_TMP/fish.answers" ||
  fail "the fish completion run failed"
compare_shell fish "$TEST_TMP/fish.answers"

# Names from the catalog: maps, shards, operations (the catalog given on the command line).
fresh_fleet comp
maps=$(shardctl map list --format json | jq -r '[.maps[].name] | sort | join(" ")')
shards=$(shardctl shard list --format json | jq -r '[.shards[].name] | sort | join(" ")')
[ -n "$maps" ] && [ -n "$shards" ] || fail "the fleet has no maps or shards"
assert_eq "$(complete_line 'shardctl split --map ""')" "$maps"
assert_eq "$(complete_line 'shardctl merge --map customers --range 1..2 --into ""')" "$shards"
assert_eq "$(complete_line 'shardctl shard show ""')" "$shards"
catalog=$SHARDCTL_CATALOG
unset SHARDCTL_CATALOG
assert_eq "$(complete_line "shardctl --catalog '$catalog' map show \"\"")" "$maps"
assert_eq "$(complete_line 'shardctl map show ""')" ""   # no catalog known: nothing, no error
export SHARDCTL_CATALOG=$catalog
shardctl move --map customers --key 900 --to shard_1 >/dev/null 2>&1 ||
  shardctl move --map customers --key 900 --to shard_2 >/dev/null
ops=$(shardctl op list --format json | jq -r '[.operations[].id] | sort | join(" ")')
[ -n "$ops" ] || fail "no operation journaled"
assert_eq "$(complete_line 'shardctl op show ""')" "$ops"

# A catalog that does not answer: nothing offered, nothing printed, within a few seconds.
export SHARDCTL_CATALOG="host=10.255.255.1 port=5432 dbname=x"
start=$SECONDS
assert_eq "$(complete_line 'shardctl split --map ""' 2>"$TEST_TMP/err")" ""
[ $((SECONDS - start)) -le 5 ] || fail "completion waited $((SECONDS - start)) s for an unreachable catalog"
[ ! -s "$TEST_TMP/err" ] || fail "completion printed: $(cat "$TEST_TMP/err")"
pass
