# The layer table of ARCHITECTURE.md ("Layers") is what lib/ builds: a folder uses only folders
# on rows below its own, and folders on one row never use each other. This reads the table,
# then every `#include "folder/..."` in lib/*/ and every shardctl_<folder> on the link lines of
# lib/*/CMakeLists.txt, and fails on one that reaches a folder on the same row or a higher one,
# and on a lib/ folder the table does not place (or a folder it places that lib/ lacks).
# No clusters, no binaries: only the source tree.
source "$(dirname "$0")/lib.sh"
src=$SHARDCTL_SOURCE_DIR

step "the table"
# The code block after "## Layers": a row starts in column 1 ("a/ | b/   what they do"),
# its description's further lines start with blanks.
rows=$(awk '
  /^## Layers/ { in_section = 1; next }
  in_section && /^## / { exit }
  in_section && /^```/ { if (in_block) exit; in_block = 1; next }
  in_block && /^[^ ]/ { sub(/   .*/, ""); print }
' "$src/ARCHITECTURE.md")
[ -n "$rows" ] || fail "ARCHITECTURE.md has no table under \"## Layers\""
declare -A rank=()
n_rows=$(wc -l <<<"$rows")
i=0
while IFS= read -r row; do
  i=$((i + 1))
  IFS='|' read -ra folders <<<"$row"
  for f in "${folders[@]}"; do
    f=$(tr -d ' ' <<<"$f")
    [[ "$f" =~ ^[a-z_]+/$ ]] || fail "ARCHITECTURE.md's layer row \"$row\" has \"$f\", not a folder/"
    f=${f%/}
    [ -z "${rank[$f]:-}" ] || fail "ARCHITECTURE.md's layer table places $f/ twice"
    rank[$f]=$((n_rows - i))  # the bottom row is 0
  done
done <<<"$rows"
[ "${rank[apps]:-}" = $((n_rows - 1)) ] || fail "ARCHITECTURE.md's layer table does not start with apps/"
[ "${#rank[@]}" -ge 20 ] || fail "read only ${#rank[@]} folders from ARCHITECTURE.md's layer table"

step "every lib/ folder has a row"
lib_folders=()
for d in "$src"/lib/*/; do
  f=$(basename "$d")
  lib_folders+=("$f")
  [ -n "${rank[$f]:-}" ] || fail "lib/$f/ is not in ARCHITECTURE.md's layer table"
done
for f in "${!rank[@]}"; do
  [ "$f" = apps ] || [ -d "$src/lib/$f" ] || fail "ARCHITECTURE.md's layer table places $f/, which lib/ does not have"
done

# uses FOLDER USED WHERE: FOLDER may use USED only when USED's row is below FOLDER's.
bad=()
uses() {
  local folder=$1 used=$2 where=$3
  [ "$used" != "$folder" ] && [ -n "${rank[$used]:-}" ] || return 0
  if [ "${rank[$used]}" -ge "${rank[$folder]}" ]; then
    local how="above it"
    [ "${rank[$used]}" -gt "${rank[$folder]}" ] || how="on its own row"
    bad+=("$where: lib/$folder/ uses $used/, $how in ARCHITECTURE.md's layer table")
  fi
}

step "includes"
n_includes=0
for f in "${lib_folders[@]}"; do
  # file:line:#include "used/..."
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    [[ "$hit" =~ include[[:space:]]*\"(\.\./)*([a-z_]+)/ ]] || fail "cannot read the folder of: $hit"
    used=${BASH_REMATCH[2]}
    n_includes=$((n_includes + 1))
    uses "$f" "$used" "${hit%%:#*}"
  done < <(cd "$src" && grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(\.\./)*[a-z_]+/' "lib/$f" || true)
done
[ "$n_includes" -ge 500 ] || fail "found only $n_includes includes of another folder in lib/"

step "link lines"
n_links=0
for f in "${lib_folders[@]}"; do
  cm="lib/$f/CMakeLists.txt"
  [ -f "$src/$cm" ] || continue  # core: an interface library declared in lib/CMakeLists.txt
  for used in $(grep -oE 'shardctl_[a-z_]+' "$src/$cm" | sed 's/^shardctl_//' | sort -u); do
    n_links=$((n_links + 1))
    uses "$f" "$used" "$cm"
  done
done
[ "$n_links" -ge 50 ] || fail "found only $n_links shardctl_ libraries on lib/'s link lines"

step "every use points down"
[ ${#bad[@]} -eq 0 ] || fail "$(printf '%s\n' "${bad[@]}")"
pass
