#!/usr/bin/env bash
# extract.sh COMMIT: prints the SQL `shardctl init` of COMMIT ran on an empty database: the
# schema steps of lib/catalog/schema.cpp at that commit, in the order of its schema_steps()
# list, then the version row init_catalog (lib/catalog/init.cpp) wrote after them. The
# catalog_versions/v*.sql fixtures begin with this output (see README.md there).
set -euo pipefail
commit=$1
src=$(git -C "$(dirname "$0")" show "$commit:lib/catalog/schema.cpp")
version=$(git -C "$(dirname "$0")" show "$commit:lib/catalog/catalog.hpp" |
  sed -n 's/.*inline constexpr int schema_version = \([0-9]*\);.*/\1/p')
# The steps list: {{1, v1}, {2, v2}, ...} -> the constant names, in order.
names=$(printf '%s\n' "$src" | tr '\n' ' ' |
  sed -n 's/.*std::vector<SchemaStep> steps = {\(.*\)};[[:space:]]*return steps;.*/\1/p' |
  grep -o '{[0-9]*, *[A-Za-z0-9_]*}' | sed 's/{[0-9]*, *\([A-Za-z0-9_]*\)}/\1/')
# Steps may live in schema*.cpp files beside schema.cpp (step 12: schema_routing.cpp).
for f in $(git -C "$(dirname "$0")" ls-tree --full-tree --name-only "$commit" lib/catalog/ | grep -E '/schema_[a-z_]+\.cpp$' || true); do
  src+=$'\n'$(git -C "$(dirname "$0")" show "$commit:$f")
done
for n in $names; do
  # The raw string literal of `constexpr std::string_view NAME = R"SQL(` ... `)SQL";`, verbatim.
  printf '%s\n' "$src" | awk -v n="$n" '
    $0 ~ "^constexpr std::string_view " n " = R\"SQL\\($" { on = 1; next }
    on && /^\)SQL";$/ { exit }
    on { print }'
done
printf 'INSERT INTO shardctl.catalog_version (version) VALUES (%s);\n' "$version"
