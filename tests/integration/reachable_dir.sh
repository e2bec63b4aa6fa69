#!/usr/bin/env bash
# reachable_dir.sh PATH: PATH itself when every directory above it lets other users through
# (o+x), else a directory of the same name under /var/tmp (/tmp without it), named after PATH's
# hash so that one build always gets the same one.
#
# The suite's clusters run as the server user and some tests run shardctl as another user:
# neither can enter a build directory under a mode-700 home such as /root. tests/CMakeLists.txt
# puts the test clusters and the tests' scratch files where they can.
set -euo pipefail
path=$(realpath -m "$1")
dir=$(dirname "$path")
reachable=1
while :; do
  if [ -e "$dir" ] && [ $(( 0$(stat -c %a "$dir") & 1 )) -eq 0 ]; then reachable=0; break; fi
  [ "$dir" != / ] || break
  dir=$(dirname "$dir")
done
if [ "$reachable" = 1 ]; then echo "$path"; exit 0; fi
base=/var/tmp
[ -d "$base" ] || base=/tmp
echo "$base/shardctl-tests-$(printf '%s' "$path" | cksum | cut -d' ' -f1)/$(basename "$path")"
