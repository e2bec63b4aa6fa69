# No password is ever stored or printed (shardctl(1), CONNECTION STRINGS): every DSN form libpq accepts
# is read with libpq's own parser, nested connection strings included, and a password anywhere
# is refused with 64, in real runs and dry runs alike, with and without -v.
source "$(dirname "$0")/lib.sh"

fresh_fleet pw --empty
before=$(catalog_dump)
secret=Zq7SecretPw

no_secret() {  # the secret is in neither output
  ! grep -q "$secret" "$STDOUT" "$STDERR" || { cat "$STDOUT" "$STDERR" >&2; fail "password printed: $*"; }
}

for dsn in \
  "host=h dbname=x password=$secret" \
  "host=h dbname=x password='$secret'" \
  "dbname='host=h user=postgres password=$secret'" \
  "host=h dbname='postgresql://u:$secret@h/db'" \
  "dbname='dbname=\\'password=$secret\\''" \
  "postgresql://u:$secret@h/db" \
  "postgresql://u@h/db?password=$secret" \
  "postgres://u:${secret}%40x@h:5432/db" \
  "host=h sslpassword=$secret"; do
  for dry in "" --dry-run; do
    expect_exit 64 shardctl -v shard add pw1 --dsn "$dsn" $dry
    expect_stderr_contains "contains a password"
    no_secret "shard add $dsn $dry"
  done
  expect_exit 64 shardctl -v --catalog "$dsn" shard list
  expect_stderr_contains "--catalog contains a password"
  no_secret "--catalog $dsn"
  SHARDCTL_CATALOG="$dsn" expect_exit 64 shardctl shard list
  expect_stderr_contains "SHARDCTL_CATALOG contains a password"
  no_secret "SHARDCTL_CATALOG=$dsn"
done

# A URI whose user part libpq does not read as a password (an unencoded '@') would put the
# secret in the port or host: refused, and the secret is not echoed.
for dsn in "postgresql://@:$secret@h2@h:-1/" "postgresql://u@$secret@h/db" "postgresql://u:x@y:$secret@h/db"; do
  for dry in "" --dry-run; do
    expect_exit 64 shardctl shard add pw2 --dsn "$dsn" $dry
    no_secret "shard add $dsn $dry"
  done
done

# libpq's parse errors quote the fragment they stopped at; a fragment that may be a secret is
# hidden, an option name is kept.
expect_exit 64 shardctl shard add pw3 --dsn "host=h password= $secret"
no_secret "unparsable"
expect_exit 64 shardctl shard add pw3 --dsn "host=h pasword=x"
expect_stderr_contains 'invalid connection option "pasword"'
expect_exit 64 shardctl shard add pw3 --dsn $'host=h password=\xff'"$secret"
no_secret "not UTF-8"

# The config file: 65 with file:line:col and the key's name.
printf 'catalog = "host=h password=%s"\n' "$secret" > "$TEST_TMP/pw.toml"
expect_exit 65 shardctl -c "$TEST_TMP/pw.toml" shard list
expect_stderr_contains "pw.toml:1:11: \"catalog\" contains a password"
no_secret "config catalog"
printf '[[archive.job]]\nname = "a"\ntable = "t"\nwhere = "true"\nto = "postgres:host=a password=%s"\n' "$secret" \
  > "$TEST_TMP/job.toml"
expect_exit 65 shardctl -c "$TEST_TMP/job.toml" shard list
expect_stderr_contains "job.toml:5:6: \"archive.job.to\" contains a password"
no_secret "config archive job"

assert_eq "$(catalog_dump)" "$before"

# A catalog written before this check may hold a password: it is never shown.
psql_catalog -q -c "INSERT INTO shardctl.shards (name, dsn) VALUES ('old', 'dbname=''host=h password=$secret'' port=1')"
for fmt in text json; do
  expect_exit 0 shardctl -v shard list --format "$fmt"
  no_secret "shard list $fmt"
  expect_exit 0 shardctl -v shard show old --format "$fmt"
  no_secret "shard show $fmt"
  expect_stdout_contains "host=h"
done
# `init` takes it out of the catalog: --dry-run says it would, naming the shard; then it does,
# and a second run has nothing left to do. The password is never printed.
for fmt in text json; do
  expect_exit 0 shardctl init --dry-run --format "$fmt"
  expect_stderr_contains "would remove the password from the stored DSN of shard old"
  no_secret "init --dry-run $fmt"
done
assert_eq "$(jq -c .passwords_removed "$STDOUT")" '["old"]'
psql_catalog -XAtc "select dsn from shardctl.shards where name = 'old'" | grep -q "$secret" || fail "the dry run changed the DSN"
expect_exit 0 shardctl init --format json
expect_stderr_contains "removed the password from the stored DSN of shard old"
no_secret "init"
assert_eq "$(jq -c '[.changed, .passwords_removed]' "$STDOUT")" '[true,["old"]]'
! psql_catalog -XAtc "select dsn from shardctl.shards" | grep -q "$secret" || fail "init left the password in the catalog"
expect_exit 0 shardctl shard show old --format json
expect_stdout_contains "host=h"
expect_exit 0 shardctl init
expect_stdout_contains "catalog is up to date"
[ ! -s "$STDERR" ] || fail "a second init still warns: $(cat "$STDERR")"
pass
