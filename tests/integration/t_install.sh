# `cmake --install` into a temporary prefix, then the installed tree alone (moved elsewhere,
# PATH without the build): --help lists every family as built in, `help split` shows the
# installed man page, a lookup routes keys, the example config parses, completions work.
source "$(dirname "$0")/lib.sh"
build=$(cd "$SHARDCTL_BIN/.." && pwd)

cmake --install "$build" --prefix "$TEST_TMP/stage" > "$TEST_TMP/install.log" ||
  fail "cmake --install failed: $(tail -5 "$TEST_TMP/install.log")"
for f in bin/shardctl share/man/man1/shardctl.1 share/man/man1/shardctl-split.1 \
         share/man/man5/shardctl.toml.5 share/bash-completion/completions/shardctl \
         share/zsh/vendor-completions/_shardctl share/fish/vendor_completions.d/shardctl.fish \
         share/doc/shardctl/README.md share/doc/shardctl/examples/shardctl.toml; do
  [ -f "$TEST_TMP/stage/$f" ] || fail "cmake --install did not install $f"
done
# Every family binary of the build, in libexec and nowhere on bin/.
families=()
for b in "$SHARDCTL_BIN"/shardctl-*; do families+=("${b##*/shardctl-}"); done
for f in "${families[@]}"; do
  [ -x "$TEST_TMP/stage/libexec/shardctl/shardctl-$f" ] || fail "shardctl-$f is not installed in libexec/shardctl"
  [ ! -e "$TEST_TMP/stage/bin/shardctl-$f" ] || fail "shardctl-$f is installed in bin/ too"
done

# From here on only the installed tree: moved (nothing may point back at where it was
# installed, nor at the build or source tree) and run with a PATH that holds neither.
p="$TEST_TMP/moved"
mv "$TEST_TMP/stage" "$p"
installed() { env -i HOME="$TEST_TMP" PATH="$p/bin:/usr/bin:/bin" MANPAGER=cat MANWIDTH=100 \
                LSAN_OPTIONS="${LSAN_OPTIONS:-}" SHARDCTL_CATALOG="${SHARDCTL_CATALOG:-}" "$@"; }

expect_exit 0 installed shardctl --help
! grep -q "plugin" "$STDOUT" || fail "a built-in family shows as a plugin: $(grep plugin "$STDOUT")"
for f in "${families[@]}"; do
  summary=$("$p/libexec/shardctl/shardctl-$f" --help-spec | jq -r .description)
  grep -qF "  $f  " "$STDOUT" || fail "installed shardctl --help does not list $f"
  grep -F "  $f  " "$STDOUT" | grep -qF -- "$summary" || fail "installed shardctl --help lacks the summary of $f: $summary"
done
expect_exit 0 installed shardctl --version
grep -qE '^shardctl [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)$' "$STDOUT" ||
  fail "unexpected --version: $(cat "$STDOUT")"

# The man page comes from the installed share/man (the build and source trees are not there).
expect_exit 0 installed shardctl help split
grep -qi "shardctl-split" "$STDOUT" && grep -q "SYNOPSIS" "$STDOUT" ||
  fail "shardctl help split did not show the installed man page: $(head -5 "$STDOUT")"
expect_exit 0 installed shardctl help
# (Rendered by man(1); without man-db installed, the page's source is shown.)
grep -qE "SHARDCTL(\(1\)| 1)" "$STDOUT" || fail "shardctl help did not show shardctl(1)"
for f in "${families[@]}"; do grep -qE "^ +$f( +|\$)|^\.B $f\$" "$STDOUT" ||
  fail "the installed shardctl(1) does not list $f"; done

# A lookup, and the example config read (an unknown key or bad value would exit 65).
fresh_fleet inst
expect_exit 0 installed shardctl lookup --map customers 42
assert_eq "$(cut -f1 "$STDOUT")" "42"
grep -qE $'^42\tshard_[0-9]+$' "$STDOUT" || fail "installed lookup: $(cat "$STDOUT")"
expect_exit 0 installed shardctl -c "$p/share/doc/shardctl/examples/shardctl.toml" --catalog "$SHARDCTL_CATALOG" map list
expect_stdout_contains "customers"

# The installed bash completion with the installed binary.
out=$(installed bash -c 'source /usr/share/bash-completion/bash_completion
  source "$1/share/bash-completion/completions/shardctl"
  COMP_WORDS=(shardctl check --format ""); COMP_CWORD=3; _shardctl; echo "${COMPREPLY[*]}"
  COMP_WORDS=(shardctl split --map ""); COMP_CWORD=3; _shardctl; echo "${COMPREPLY[*]}"' _ "$p")
assert_eq "$out" "text json nagios
customers"
pass
