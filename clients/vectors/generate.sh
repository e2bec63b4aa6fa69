#!/usr/bin/env bash
# Regenerates clients/vectors/routing.json: the routing test vectors every client port checks
# itself against, produced by the server (shardctl.route() and PostgreSQL's hash functions).
#
#   clients/vectors/generate.sh [OUT]          (OUT defaults to clients/vectors/routing.json)
#
# Environment: SHARDCTL_BIN (default: build/release/bin of this tree); SHARDCTL_CATALOG: an
# empty database to make the maps in (a test passes one); without it, a sandbox of its own is
# brought up under a temp directory and taken down afterwards. Needs /usr/bin/python3 with
# psycopg (python3-psycopg). The output depends only on this script, gen_vectors.py and the
# server's functions: run twice, it is byte-identical (t_client_vectors.sh checks that the
# committed file is what the server says today).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/routing.json}
bin=${SHARDCTL_BIN:-$root/build/release/bin}
sc() { "$bin/shardctl" "$@" >/dev/null; }

if [ -z "${SHARDCTL_CATALOG:-}" ]; then
  tmp=$(mktemp -d /tmp/shardctl-vectors.XXXXXX)
  chmod 755 "$tmp"
  trap '"$bin/shardctl" sandbox down --dir "$tmp/sb" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
  "$bin/shardctl" sandbox up --dir "$tmp/sb" --no-fleet -q >/dev/null
  psql -X -q "host=$tmp/sb/run port=6400 user=postgres dbname=postgres" -c "create database vectors" >/dev/null
  export SHARDCTL_CATALOG="host=$tmp/sb/run port=6400 user=postgres dbname=vectors"
fi
unset SHARDCTL_CONFIG
sc init
for s in s1 s2 s3 s4; do sc shard add "$s" --dsn "dbname=vectors_$s"; done

# mappings MAP KIND KEYTYPE SPEC...: SPEC is RANGE>SHARD or =POINT>SHARD.
mappings() {
  local map=$1 kind=$2 kt=$3 spec
  shift 3
  sc map create "$map" --kind "$kind" --key-type "$kt"
  for spec in "$@"; do
    if [ "${spec:0:1}" = "=" ]; then
      spec=${spec:1}
      sc mapping add --map "$map" --point "${spec%>*}" --shard "${spec##*>}"
    else
      sc mapping add --map "$map" --range "${spec%>*}" --shard "${spec##*>}"
    fi
  done
}
# Ranges with a gap (unmapped keys) in each; points at the type's limits.
mappings range_int range int '..-1000>s1' '-1000..0>s2' '0..1000>s3' '1000..5000>s4' '6000..>s1'
mappings range_bigint range bigint '..-4294967296>s1' '-4294967296..0>s2' '0..1000>s3' '1000..5000>s4' \
  '6000..4611686018427387904>s2' '4611686018427387904..>s3'
mappings range_text range text '..B>s1' 'B..a>s2' 'a..m>s3' $'n..\xc3\xa9>s4' $'\xc3\xa9..\xe6\x97\xa5>s1' $'\xe6\x97\xa5..>s2'
mappings range_uuid range uuid '..40000000-0000-0000-0000-000000000000>s1' \
  '40000000-0000-0000-0000-000000000000..80000000-0000-0000-0000-000000000000>s2' \
  '80000000-0000-0000-0000-000000000000..c0000000-0000-0000-0000-000000000000>s3' \
  'd0000000-0000-0000-0000-000000000000..>s4'
mappings list_int list int '=-2147483648>s1' '=-1>s2' '=0>s3' '=1>s4' '=42>s1' '=2147483647>s2'
mappings list_bigint list bigint '=-9223372036854775808>s1' '=-1>s2' '=0>s3' '=4294967296>s4' \
  '=9223372036854775807>s1' '=42>s2'
mappings list_text list text '=a>s2' '=A>s3' $'=\xc3\xa9>s4' $'=e\xcc\x81>s1' $'=\xe6\x97\xa5\xe6\x9c\xac>s2' \
  $'=\xf0\x9f\x99\x82>s3' '=two words>s4' '=acme>s1'
mappings list_uuid list uuid '=00000000-0000-0000-0000-000000000000>s1' '=ffffffff-ffff-ffff-ffff-ffffffffffff>s2' \
  '=a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11>s3'
for kt in int bigint text uuid; do sc map create "hash_$kt" --kind hash --key-type "$kt" --shards s1,s2,s3,s4; done

"${SHARDCTL_CLIENT_PYTHON:-/usr/bin/python3}" "$here/gen_vectors.py" "$SHARDCTL_CATALOG" "$out"
