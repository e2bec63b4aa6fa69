# Hostile files, through the binary on one fleet: every file shardctl
# reads from the operator (config, plan, archive manifest and files, load file, migration) is a
# regular file under its size limit, and JSON/TOML nested at most 64 levels deep; anything else
# exits 65 naming file(:line:col), never a signal, a hang or exit 70, and changes nothing. A plan
# runs only as `rebalance plan` wrote it: without its fingerprint, or edited, it is refused.
source "$(dirname "$0")/lib.sh"

fresh_fleet hostile --shards 2 --scale 1
mkfifo "$TEST_TMP/fifo"
mkdir "$TEST_TMP/dir"
repeat() { printf "%${2}s" '' | tr ' ' "$1"; }  # repeat CHAR N
levels63=$(printf '[0]%.0s' $(seq 63))            # the field path of 63 nested arrays
# A refusal of a FIFO or /dev/zero must come at once: `timeout` turns a hang into exit 124.
hostile() { timeout 20 "$SHARDCTL_BIN/shardctl" "$@"; }

step "a config nested too deep: dotted key parts, header parts, arrays (toml++ recursed to a SIGSEGV)"
key=a$(printf '.a%.0s' $(seq 39999))
printf 'catalog = "%s"\n%s = 1\n' "$SHARDCTL_CATALOG" "$key" > "$TEST_TMP/deep.toml"
expect_exit 65 shardctl -c "$TEST_TMP/deep.toml" shard list
expect_stderr_contains "$TEST_TMP/deep.toml:2:129: nested more than 64 levels deep (dotted key parts, [table.header] parts, arrays and inline tables)"
printf '[%s]\n' "$key" > "$TEST_TMP/deep.toml"
expect_exit 65 shardctl -c "$TEST_TMP/deep.toml" shard list
expect_stderr_contains "$TEST_TMP/deep.toml:1:130: nested more than 64 levels deep"
printf 'x = %s%s\n' "$(repeat '[' 100000)" "$(repeat ']' 100000)" > "$TEST_TMP/deep.toml"
expect_exit 65 shardctl -c "$TEST_TMP/deep.toml" shard list
expect_stderr_contains "$TEST_TMP/deep.toml:1:69: nested more than 64 levels deep"

step "a plan as written is accepted"
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan -o plan.json
expect_exit 0 shardctl rebalance apply plan.json --dry-run
maps_before=$(shardctl mapping list --map customers --format json)
dump=$(catalog_dump)
step "a plan without its fingerprint, with a step nobody planned (before, apply merged shard_2 into shard_1)"
low=$(jq -r '[.mappings[] | select(.shard == "shard_2")][0].range | split("..")[0]' <<<"$maps_before")
jq --arg low "$low" 'del(.fingerprint) | .plan.maps = [{name: "customers", kind: "range", bound_type: "bigint"}]
    | .plan.steps = [{kind: "merge", map: "customers", from: "shard_2", to: "shard_1",
    low: $low, high: null, at: null, move: "upper", rows: 1, bytes: 1, load: 0, batches: 1,
    offline_seconds_per_batch: 0, after: []}]' plan.json > unsigned.json
expect_exit 65 shardctl rebalance apply unsigned.json
expect_stderr_contains "unsigned.json: the plan has no \"fingerprint\"; a plan is applied only as \`shardctl rebalance plan\` wrote it"
expect_stderr_contains "hint: make a new plan with \`shardctl rebalance plan -o unsigned.json\`"
step "an edited plan"
jq '.plan.imbalance_after = 0' plan.json > edited.json
expect_exit 65 shardctl rebalance apply edited.json --dry-run
expect_stderr_contains "edited.json: the plan was edited after it was made (its fingerprint does not match its content)"
step "a number no double holds, named by its field and place (before: exit 70)"
sed 's/"imbalance_before": [^,]*/"imbalance_before": 1e400/' plan.json > huge-number.json
line=$(grep -n '1e400' huge-number.json | cut -d: -f1)
col=$(awk -v n="$line" 'NR == n { print index($0, "1e400") }' huge-number.json)
expect_exit 65 shardctl rebalance apply huge-number.json --dry-run
expect_stderr_contains "huge-number.json:$line:$col: plan.imbalance_before: the number 1e400 is out of range"
step "a plan with one extra key nested 100,000 deep (before: SIGSEGV in the fingerprint's copy)"
{ printf '{"extra": %s%s, ' "$(repeat '[' 100000)" "$(repeat ']' 100000)"; tail -c +2 plan.json; } > deep.json
expect_exit 65 shardctl rebalance apply deep.json --dry-run
expect_stderr_contains "deep.json:1:74: extra$levels63: nested more than 64 levels deep (arrays and objects within each other)"
step "a plan file that is not a regular file, or too big (before: a FIFO hung, /dev/zero ended in bad_alloc, 70)"
expect_exit 65 hostile rebalance apply "$TEST_TMP/fifo" --dry-run
expect_stderr_contains "plan file $TEST_TMP/fifo is not a regular file (a FIFO)"
expect_exit 65 hostile rebalance apply /dev/zero --dry-run
expect_stderr_contains "plan file /dev/zero is not a regular file (a character device)"
expect_exit 65 shardctl rebalance apply "$TEST_TMP/dir" --dry-run
expect_stderr_contains "plan file $TEST_TMP/dir is not a regular file (a directory)"
truncate -s 65M big.json
expect_exit 65 shardctl rebalance apply big.json --dry-run
expect_stderr_contains "plan file big.json is 68157440 bytes; the limit for plan files is 67108864 bytes (64 MiB)"
expect_exit 64 shardctl rebalance apply missing.json
expect_stderr_contains "cannot read plan file missing.json: No such file or directory"
assert_eq "$(catalog_dump)" "$dump"
assert_eq "$(shardctl mapping list --map customers --format json)" "$maps_before"

step "a load file that is not a regular file (before: a FIFO hung, /dev/zero ended in bad_alloc, 70)"
expect_exit 65 hostile stats collect --map customers --load-file "$TEST_TMP/fifo"
expect_stderr_contains "load file $TEST_TMP/fifo is not a regular file (a FIFO)"
expect_exit 65 hostile stats collect --map customers --load-file /dev/zero
expect_stderr_contains "load file /dev/zero is not a regular file (a character device)"
expect_exit 64 shardctl stats collect --map customers --load-file missing.csv
expect_stderr_contains "cannot read load file missing.csv: No such file or directory"
assert_eq "$(catalog_dump)" "$dump"

step "a migration file over 1 GiB (sparse: refused by its size, never read)"
mkdir migrations
truncate -s 1073741825 migrations/V1__big.sql
expect_exit 65 shardctl schema apply migrations
expect_stderr_contains "migration file migrations/V1__big.sql is 1073741825 bytes; the limit for migration files is 1073741824 bytes (1 GiB)"
assert_eq "$(psql_shard 1 -XAtc "select count(*) from pg_tables where schemaname = 'shardctl' and tablename = 'schema_history'")" "0"

step "an archive run to a directory"
expect_exit 0 shardctl archive run --table orders --where "ordered_at < '2024-02-01'" --to "dir:$TEST_TMP/arch" --format json
RUN=$(jq -r .id "$STDOUT")
M="$TEST_TMP/arch/$RUN/manifest.json"
cp "$M" manifest.good
orders=$(for n in 1 2; do psql_shard "$n" -XAtc "select md5(o::text) from orders o"; done | sort | md5sum)
dump=$(catalog_dump)
step "a manifest whose files nest 1,000,000 deep, every other field as written (before: SIGSEGV)"
prefix="$(jq -c 'del(.files)' manifest.good | sed 's/}$//'), \"files\": "
{ printf '%s' "$prefix"; repeat '[' 1000000; repeat ']' 1000000; printf '}\n'; } > "$M"
expect_exit 65 shardctl archive restore "$RUN"
expect_stderr_contains "$M:1:$(( ${#prefix} + 64 )): files$levels63: nested more than 64 levels deep"
step "a manifest that is not a regular file (before: a FIFO hung)"
rm "$M"
mkfifo "$M"
expect_exit 65 hostile archive restore "$RUN"
expect_stderr_contains "archive manifest $M is not a regular file (a FIFO)"
rm "$M"
ln -s /dev/zero "$M"
expect_exit 65 hostile archive restore "$RUN"
expect_stderr_contains "archive manifest $M is not a regular file (a character device)"
rm "$M"
cp manifest.good "$M"
step "a FIFO in place of an archived file (before: the restore waited for a writer forever)"
f1=$(jq -r '.files[0].path' "$M")
mv "$TEST_TMP/arch/$RUN/$f1" file.good
mkfifo "$TEST_TMP/arch/$RUN/$f1"
expect_exit 65 hostile archive restore "$RUN"
expect_stderr_contains "archive file $TEST_TMP/arch/$RUN/$f1 is not a regular file (a FIFO)"
rm "$TEST_TMP/arch/$RUN/$f1"
mv file.good "$TEST_TMP/arch/$RUN/$f1"
assert_eq "$(for n in 1 2; do psql_shard "$n" -XAtc "select md5(o::text) from orders o"; done | sort | md5sum)" "$orders"
assert_eq "$(catalog_dump)" "$dump"
step "the files as written restore: the refusals were about the files, not the run"
expect_exit 0 shardctl archive restore "$RUN"
pass
