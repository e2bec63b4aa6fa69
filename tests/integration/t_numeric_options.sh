# Every option that takes a number (value N or SECONDS in --help-spec, the one definition its
# --help, man page and completions come from), given a value that is not one, exits 64 with one
# line naming the option, the value it got and what it expects: never CLI11's raw "Could not
# convert". Read from every family's --help-spec, so a new numeric option is covered as it lands.
source "$(dirname "$0")/lib.sh"

tried=0
for bin in "$SHARDCTL_BIN"/shardctl-*; do
  family=${bin##*/shardctl-}
  # "SUBCOMMAND OPTION" per numeric option; "-" for the family's own options.
  while read -r sub opt; do
    args=("$family")
    [ "$sub" = - ] || args+=("$sub")
    expect_exit 64 shardctl "${args[@]}" "$opt" 8MB
    first=$(head -1 "$STDERR")
    case $first in
      "shardctl $family: error: $opt: '8MB' is not "*) ;;
      *) fail "shardctl ${args[*]} $opt 8MB: want \"$opt: '8MB' is not ...\", got: $first" ;;
    esac
    [ "$(grep -c . "$STDERR")" -le 2 ] || fail "shardctl ${args[*]} $opt 8MB: more than an error and a hint: $(cat "$STDERR")"
    ! grep -qF "Could not convert" "$STDERR" || fail "shardctl ${args[*]} $opt 8MB: CLI11's raw message"
    tried=$((tried + 1))
  done < <("$bin" --help-spec | jq -r '
    def numeric: select(.value_name == "N" or .value_name == "SECONDS") | .names[-1];
    ([.options[] | numeric] | map("- " + .))[], (.commands[] | .name as $c | .options[] | numeric | "\($c) \(.)")')
done
# The sample: move --batch-size, split --cutover-timeout, check --parallel at least.
[ "$tried" -ge 20 ] || fail "only $tried numeric options found in the families' --help-spec"
expect_exit 64 shardctl move --map customers --key 1 --to shard_2 --batch-size 8MB
assert_eq "$(cat "$STDERR")" "shardctl move: error: --batch-size: '8MB' is not a whole number
hint: see \`shardctl move --help\`"
expect_exit 64 shardctl split --map customers --at 5 --to shard_2 --online --cutover-timeout 2x
expect_stderr_contains "shardctl split: error: --cutover-timeout: '2x' is not a number of seconds"
echo "numeric options tried: $tried"
pass
