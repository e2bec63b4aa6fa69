# The Debian package: `cpack -G DEB` over this build, dependencies computed by dpkg-shlibdeps;
# `dpkg -i` installs it, the installed shardctl runs, `apt-get remove` leaves nothing.
# Installing needs root (or `sudo -n`). Without either, the package is still built and
# checked, and its tree run from `dpkg-deb -x`, then the test exits 77, which CTest reports
# as skipped (never as passed): the install and the removal were not proven.
# The package is removed again at the end, failure included, so the machine is left as found.
source "$(dirname "$0")/lib.sh"
build=$(cd "$SHARDCTL_BIN/.." && pwd)

# The package of this build (reusing it: cpack installs the build's files, builds nothing).
(cd "$TEST_TMP" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$TEST_TMP/pkg" > "$TEST_TMP/cpack.log" 2>&1) ||
  fail "cpack failed: $(tail -20 "$TEST_TMP/cpack.log")"
deb=$(ls "$TEST_TMP"/pkg/shardctl_*.deb 2>/dev/null | head -1)
[ -f "$deb" ] || fail "cpack made no shardctl_*.deb: $(ls "$TEST_TMP/pkg")"

# Dependencies computed from the binaries: libpq and libpqxx at least, each versioned.
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libpq5 libpqxx libc6 libstdc++6; do
  sed 's/, /\n/g' <<<"$depends" | grep -F -- "$lib" | grep -qF "(>= " || fail "Depends lacks $lib (shlibdeps): $depends"
done
# Nothing in /etc (no conffile a removal would leave), the layout of the install section.
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' > "$TEST_TMP/contents"
! grep -q '^/etc' "$TEST_TMP/contents" || fail "the package installs into /etc"
for f in /usr/bin/shardctl /usr/libexec/shardctl/shardctl-split /usr/share/man/man1/shardctl.1 \
         /usr/share/bash-completion/completions/shardctl /usr/share/doc/shardctl/examples/shardctl.toml; do
  grep -qxF "$f" "$TEST_TMP/contents" || fail "the package lacks $f"
done

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
    dpkg-deb -x "$deb" "$TEST_TMP/root"
    "$TEST_TMP/root/usr/bin/shardctl" --version | grep -q '^shardctl ' || fail "the packaged shardctl does not run"
    echo "SKIP [$TEST_NAME]: not root and no passwordless sudo: the package was built and checked, not installed" >&2
    exit 77
  fi
fi
if dpkg-query -W -f='${Status}' shardctl 2>/dev/null | grep -q "installed"; then
  fail "a shardctl package is already installed on this machine; not replacing it"
fi

# dpkg takes a lock; another apt run on the machine may hold it for a while.
dpkg_retry() {
  local try
  for try in $(seq 1 30); do
    "${sudo[@]}" "$@" > "$TEST_TMP/dpkg.log" 2>&1 && return 0
    grep -qi "lock" "$TEST_TMP/dpkg.log" || break
    sleep 2
  done
  cat "$TEST_TMP/dpkg.log" >&2
  return 1
}
remove_package() {
  if dpkg-query -W -f='${Status}' shardctl 2>/dev/null | grep -q "installed"; then
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get remove -y -qq -o DPkg::Lock::Timeout=60 shardctl >/dev/null 2>&1 ||
      "${sudo[@]}" dpkg -r shardctl >/dev/null 2>&1 || true
  fi
}
trap remove_package EXIT

dpkg_retry dpkg -i "$deb" || fail "dpkg -i failed"
dpkg-query -W -f='${Status}' shardctl | grep -q "install ok installed" || fail "shardctl is not installed after dpkg -i"
dpkg -L shardctl > "$TEST_TMP/listed"
expect_exit 0 /usr/bin/shardctl --version
grep -qE '^shardctl [0-9.]+ \(commit ' "$STDOUT" || fail "unexpected --version: $(cat "$STDOUT")"
expect_exit 0 /usr/bin/shardctl --help
! grep -q plugin "$STDOUT" || fail "the installed package lists a built-in family as a plugin"
expect_stdout_contains "  split  "

DEBIAN_FRONTEND=noninteractive dpkg_retry apt-get remove -y -qq -o DPkg::Lock::Timeout=60 shardctl || fail "apt-get remove failed"
! dpkg -L shardctl >/dev/null 2>&1 || fail "dpkg still lists files of shardctl after apt-get remove: $(dpkg -L shardctl | head -5)"
! dpkg-query -W -f='${Status}' shardctl 2>/dev/null | grep -q "config-files" || fail "apt-get remove left config files"
left=0
while IFS= read -r f; do
  # Shared directories (/usr/share/man/man1, ...) stay; the package's files and its own
  # directories (/usr/libexec/shardctl, /usr/share/doc/shardctl) go.
  if [ -e "$f" ] && ! [ -d "$f" ]; then echo "  left behind: $f" >&2; left=$((left + 1)); fi
  if [ -d "$f" ] && [[ $f == */shardctl ]]; then echo "  directory left: $f" >&2; left=$((left + 1)); fi
done < "$TEST_TMP/listed"
[ "$left" -eq 0 ] || fail "apt-get remove left $left path(s) behind"
[ "$(wc -l < "$TEST_TMP/listed")" -gt 20 ] || fail "dpkg -L listed too few files: $(wc -l < "$TEST_TMP/listed")"
pass
