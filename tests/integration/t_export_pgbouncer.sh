# shardctl export pgbouncer: the [databases] section a real PgBouncer 1.18 (Debian's) loads, and
# through which every shard answers; a shard DSN PgBouncer cannot express exactly (sslmode, ...)
# is refused with exit 65 and nothing is written (man/shardctl-export.1).
source "$(dirname "$0")/lib.sh"
needs_root "PgBouncer runs as the unprivileged user postgres here, started through runuser"
pgbouncer=/usr/sbin/pgbouncer
[ -x "$pgbouncer" ] || skip "no $pgbouncer"
user=${SHARDCTL_SANDBOX_USER:-postgres}

fresh_fleet export_pgb --shards 3 --scale 1
out="$TEST_TMP/shards.ini"

step "export"
expect_exit 0 shardctl export pgbouncer -o "$out" --pool-mode transaction --listen bouncer.internal:6432
expect_stdout_contains "wrote 3 database entries to $out"
grep -qx '\[databases\]' "$out" || fail "no [databases] line"
for i in 1 2 3; do
  grep -q "^$(shard_name $i) = host=.* dbname=.* pool_mode=transaction$" "$out" || { cat "$out" >&2; fail "no entry for shard $i"; }
  grep -qF "; shardctl shard set $(shard_name $i) --app-dsn 'host=bouncer.internal port=6432 dbname=$(shard_name $i)'" "$out" ||
    fail "no shard set line for shard $i"
done
! grep -i password "$out" || fail "a password line in the export"
ls "$TEST_TMP" | grep -q 'shards.ini.tmp' && fail "a .tmp file was left"
expect_exit 0 shardctl export pgbouncer --map customers --format json
assert_eq "$(jq -r '.databases | map(.name) | join(",")' "$STDOUT")" "$(shard_name 1),$(shard_name 2),$(shard_name 3)"

step "a real PgBouncer loads it and reaches every shard"
dir=$(mktemp -d /tmp/shardctl-pgb.XXXXXX)
port=$((20000 + RANDOM % 20000))
cp "$out" "$dir/shards.ini"
printf '"%s" ""\n' "$user" "$(id -un)" > "$dir/users.txt"
cat > "$dir/pgbouncer.ini" <<INI
[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $dir
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
%include $dir/shards.ini
INI
chown -R "$user" "$dir"
runuser -u "$user" -- "$pgbouncer" -d "$dir/pgbouncer.ini" || { cat "$dir/pgbouncer.log" >&2; fail "pgbouncer did not start"; }
trap 'kill "$(cat "$dir/pgbouncer.pid" 2>/dev/null)" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do [ -S "$dir/.s.PGSQL.$port" ] && break; sleep 0.1; done
for i in 1 2 3; do
  name=$(shard_name $i)
  want=$(psql_shard $i -XAtc "select current_database() || ' ' || count(*) from customers")
  got=$(psql -X "host=$dir port=$port dbname=$name user=$user" -Atc "select current_database() || ' ' || count(*) from customers") ||
    { cat "$dir/pgbouncer.log" >&2; fail "no answer from shard $name through PgBouncer"; }
  assert_eq "$got" "$want"
done
grep -qi "error\|syntax" "$dir/pgbouncer.log" && { cat "$dir/pgbouncer.log" >&2; fail "PgBouncer logged an error"; }

step "refusals write nothing"
cp "$out" "$TEST_TMP/before.ini"
shardctl shard add tls_shard --dsn "host=/nonexistent port=5432 dbname=x sslmode=require" >/dev/null 2>&1
shardctl shard add opt_shard --dsn "postgresql:///x?host=/nonexistent&options=-cwork_mem%3D1MB" >/dev/null 2>&1
expect_exit 65 shardctl export pgbouncer -o "$out"
expect_stderr_contains "shard tls_shard: its DSN sets sslmode"
expect_stderr_contains "shard opt_shard: its DSN sets options"
cmp -s "$out" "$TEST_TMP/before.ini" || fail "a refused export changed $out"
ls "$TEST_TMP" | grep -q 'shards.ini.tmp' && fail "a refused export left a .tmp file"
expect_exit 65 shardctl export pgbouncer
assert_eq "$(cat "$STDOUT")" ""
# Only the shards a map uses: the refused ones are not among them.
expect_exit 0 shardctl export pgbouncer --map customers
expect_exit 64 shardctl export pgbouncer --map nosuch
expect_exit 64 shardctl export pgbouncer --listen nocolon
expect_exit 64 shardctl export pgbouncer --pool-mode sometimes
pass
