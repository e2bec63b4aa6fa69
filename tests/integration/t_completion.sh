# The bash, zsh and fish completions the build generates agree with every command's own parser: the options
# of each command, the values each one's parser accepts (check --format offers nagios, split
# --format does not), the subcommands; and map, shard and operation names come from the
# catalog when it answers, and silently nothing when none is known, it is unreachable, or it
# accepts the connection and never answers. (The completion gives up on a silent catalog by
# itself: connect_timeout and alarm() in apps/complete_names.cpp, `timeout` in
# scripts/gen-completions.sh. The test waits for it to return while the catalog stays silent,
# and does not time it.)
source "$(dirname "$0")/lib.sh"
comp_file="$SHARDCTL_BIN/../completions/shardctl.bash"
[ -f "$comp_file" ] || fail "the build made no bash completion ($comp_file)"

# Runs bash completion once per input line (the words of a command line; the last one is
# completed) in one bash, printing the sorted candidates of each on one line. (`timeout` is
# a watchdog: a hang becomes exit 124, far beyond any bound of the completion itself.)
run_completions() {
  PATH="$SHARDCTL_BIN:/usr/bin:/bin" timeout 120 bash -c '
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

# names_job NAME: in the background, completes `split --map` (map names from the catalog)
# into $TEST_TMP/NAME.out and .err; wait_names PID NAME CASE then requires that it returned
# (the watchdog's exit 124 says it kept waiting), offered nothing and printed nothing.
names_job() { printf '%s\n' 'shardctl split --map ""' | run_completions > "$TEST_TMP/$1.out" 2> "$TEST_TMP/$1.err"; }
wait_names() {
  local got=0
  wait "$1" || got=$?
  [ "$got" != 124 ] || fail "$3: the completion was still waiting when its 120 s watchdog fired"
  [ "$got" = 0 ] || fail "$3: the completion run failed (exit $got): $(cat "$TEST_TMP/$2.err")"
  [ "$(tr -d ' \n' < "$TEST_TMP/$2.out")" = "" ] || fail "$3: completion offered: $(cat "$TEST_TMP/$2.out")"
  [ ! -s "$TEST_TMP/$2.err" ] || fail "$3: completion printed: $(cat "$TEST_TMP/$2.err")"
}
no_names() { names_job names & wait_names $! names "$1"; }

# A catalog that accepts the connection and never answers: a listener on a loopback port that
# holds every connection open without a byte in reply, and notes each one in silent.log.
# (perl-base is Essential in Debian: always installed.) The completion against it runs in the
# background while the parser comparisons below run, and is checked at the end. The listener
# ends itself once this shell is gone (no EXIT trap here: lib.sh's drops the test's databases),
# and keeps off this test's stdout and stderr, which CTest waits on.
perl -MIO::Socket::INET -e '
  my ($ready, $log, $parent) = @ARGV;
  my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 16, ReuseAddr => 1, Timeout => 1)
    or die "listen: $!";
  open(my $r, ">", "$ready.tmp") or die; print $r $s->sockport, "\n"; close $r; rename("$ready.tmp", $ready);
  my @held;
  while (getppid() == $parent) {
    my $c = $s->accept or next;
    push @held, $c; open(my $l, ">>", $log) or die; print $l "accepted\n"; close $l;
  }
' "$TEST_TMP/silent.port" "$TEST_TMP/silent.log" "$$" > "$TEST_TMP/silent.stderr" 2>&1 &
silent_pid=$!
for _ in $(seq 1 400); do
  [ -s "$TEST_TMP/silent.port" ] && break
  kill -0 "$silent_pid" 2>/dev/null || fail "the silent catalog's listener exited: $(cat "$TEST_TMP/silent.stderr")"
  sleep 0.05
done
[ -s "$TEST_TMP/silent.port" ] || fail "the silent catalog's listener never became ready"
SHARDCTL_CATALOG="host=127.0.0.1 port=$(cat "$TEST_TMP/silent.port") dbname=x" names_job silent &
silent_job=$!

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
[ "$(wc -l < "$TEST_TMP/cases")" -gt 50 ] || fail "too few completion cases: $(wc -l < "$TEST_TMP/cases")"

# compare_shell SHELL ANSWERS: ANSWERS holds one line per case, in order, each the parser's
# list. The counts are compared first: a shell that stopped early (or printed extra lines)
# fails here, whatever the lines it did print say.
compare_shell() {
  local cases answers problems
  cases=$(wc -l < "$TEST_TMP/cases"); answers=$(wc -l < "$2")
  [ "$answers" -eq "$cases" ] || fail "$1 answered $answers of $cases cases"
  problems=$(paste "$TEST_TMP/cases" "$2" | awk -F'\t' '$2 != $3 { n++; print "  " s ": " $1 ": completion offers [" $3 "], the parser has [" $2 "]" > "/dev/stderr" }
                                                        END { print n + 0 }' s="$1")
  [ "$problems" -eq 0 ] || fail "$problems disagreement(s) between the $1 completion and the parsers"
}
cut -f1 "$TEST_TMP/cases" | run_completions | sed 's/ $//' > "$TEST_TMP/bash.answers" || fail "the bash completion run failed"
compare_shell bash "$TEST_TMP/bash.answers"

# The same cases through zsh (a real interactive zsh driving the generated _shardctl) and fish
# (`complete -C`): the installed completions of all three shells agree with the parsers.
cut -f1 "$TEST_TMP/cases" | sed 's/ ""$/ /' > "$TEST_TMP/lines"
PATH="$SHARDCTL_BIN:/usr/bin:/bin" TMPDIR=$TEST_TMP timeout 120 zsh -f "$(dirname "$0")/zsh_complete.zsh" \
  "$SHARDCTL_BIN/../completions" < "$TEST_TMP/lines" > "$TEST_TMP/zsh.answers" 2> "$TEST_TMP/zsh.err" ||
  fail "the zsh completion run failed: $(cat "$TEST_TMP/zsh.err")"
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
no_names "no catalog known"
export SHARDCTL_CATALOG=$catalog
shardctl move --map customers --key 900 --to shard_1 >/dev/null 2>&1 ||
  shardctl move --map customers --key 900 --to shard_2 >/dev/null
ops=$(shardctl op list --format json | jq -r '[.operations[].id] | sort | join(" ")')
[ -n "$ops" ] || fail "no operation journaled"
assert_eq "$(complete_line 'shardctl op show ""')" "$ops"

# A catalog that is not there: no server behind the socket.
mkdir -p "$TEST_TMP/nowhere"
SHARDCTL_CATALOG="host=$TEST_TMP/nowhere port=5432 dbname=x" no_names "unreachable catalog"

# The silent catalog's completion, started at the top, must have given up by itself.
wait_names "$silent_job" silent "silent catalog"
# It did reach the silent catalog, and so gave up on it rather than failing before. (The
# listener may accept the connection only after the client left: wait for its note.)
for _ in $(seq 1 400); do [ -s "$TEST_TMP/silent.log" ] && break; sleep 0.05; done
[ -s "$TEST_TMP/silent.log" ] || fail "silent catalog: the completion never connected to it"
kill -0 "$silent_pid" 2>/dev/null || fail "silent catalog: the listener is gone, so it may have answered: $(cat "$TEST_TMP/silent.stderr")"
kill "$silent_pid"
pass
