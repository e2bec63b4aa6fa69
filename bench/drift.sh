#!/usr/bin/env bash
# Benchmark: `shardctl schema drift` over 64 shard databases (32 on each of the sandbox's two
# shard clusters), each holding 200 tables: a template database is built once per cluster and
# cloned with CREATE DATABASE ... TEMPLATE. Each table has 6 columns (identity, defaults, a
# numeric with a check), a primary key, a second index, a foreign key to a parent table
# (every 10th table also a trigger), so a shard holds about 2,500 objects to compare.
# Times `schema drift --parallel 8` on the identical fleet (best and median of RUNS), then
# with one column changed by hand on one shard (must exit 1 naming it). Target: under 5 s.
# The template is vacuumed before it is cloned, as a long-lived shard's catalogs are.
# The machine may be shared: besides wall time it reports the CPU seconds the run cost (the
# shard clusters' backends, reaped into their postmasters' cutime/cstime, plus shardctl's own),
# and that divided by the cores, the wall time the run would take with the cores to itself.
# Usage: bench/drift.sh [BIN_DIR] [SHARDS] [TABLES] [RUNS]
source "$(dirname "$0")/lib.sh" "${1:-}"
shards=${2:-64}
tables=${3:-200}
runs=${4:-5}

sandbox_up --no-fleet
export SHARDCTL_CATALOG
SHARDCTL_CATALOG=$("$bin/shardctl" sandbox fleet drift --dir "$work/sb" --empty)
"$bin/shardctl" sandbox status --dir "$work/sb" --format json > "$work/status.json"
sock=$(jq -r .socket_dir "$work/status.json")
mapfile -t ports < <(jq -r '.clusters[] | select(.name != "catalog") | .port' "$work/status.json")

# The template: 200 tables like an application's, and a parent table they reference.
{
  echo "CREATE TABLE parent (id bigint PRIMARY KEY, name text NOT NULL);"
  echo "CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN NEW.updated_at := now(); RETURN NEW; END \$\$;"
  for ((t = 1; t <= tables; t++)); do
    printf "CREATE TABLE t_%03d (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, parent_id bigint NOT NULL REFERENCES parent (id),
      status text NOT NULL DEFAULT 'new', amount numeric(12,2) CHECK (amount >= 0), note varchar(200),
      updated_at timestamptz NOT NULL DEFAULT now());\n" "$t"
    printf "CREATE INDEX t_%03d_parent ON t_%03d (parent_id, updated_at);\n" "$t" "$t"
    ((t % 10 == 0)) && printf "CREATE TRIGGER t_%03d_touch BEFORE UPDATE ON t_%03d FOR EACH ROW EXECUTE FUNCTION touch();\n" "$t" "$t"
  done
} > "$work/template.sql"
t0=$(now)
for p in "${ports[@]}"; do
  psql -XAtq "host=$sock port=$p user=postgres dbname=postgres" -c "CREATE DATABASE drift_template"
  psql -XAtq -v ON_ERROR_STOP=1 "host=$sock port=$p user=postgres dbname=drift_template" -f "$work/template.sql"
  # A long-lived shard's catalogs have been vacuumed by autovacuum. A clone of a template
  # that was not keeps the template's dead catalog rows, and autovacuum never visits it (the
  # clone's statistics start at zero): every backend would then re-try pruning those pages.
  psql -XAtq "host=$sock port=$p user=postgres dbname=drift_template" -c "VACUUM (FREEZE, ANALYZE)"
done
for ((i = 1; i <= shards; i++)); do
  p=${ports[$((i % ${#ports[@]}))]}
  db=$(printf "drift_%02d" "$i")
  psql -XAtq "host=$sock port=$p user=postgres dbname=postgres" -c "CREATE DATABASE $db TEMPLATE drift_template"
  "$bin/shardctl" shard add "$(printf "s%02d" "$i")" --dsn "host=$sock port=$p user=postgres dbname=$db" -q >/dev/null
done
echo "made $shards shard databases with $tables tables each in $(r "$(now) - $t0") s"

mapfile -t pids < <(jq -r '.clusters[] | select(.name != "catalog") | .pid' "$work/status.json")
hz=$(getconf CLK_TCK)
cores=$(nproc)
# CPU seconds of the shard clusters' exited backends so far.
server_cpu() {
  local p total=0
  for p in "${pids[@]}"; do total=$((total + $(awk '{print $16 + $17}' "/proc/$p/stat"))); done
  echo "$total"
}
times=() cpus=()
for ((k = 1; k <= runs; k++)); do
  c0=$(server_cpu)
  t0=$(now)
  /usr/bin/time -f "%U %S" -o "$work/client.cpu" "$bin/shardctl" schema drift --parallel 8 --format json > "$work/drift.json"
  times+=("$(r "$(now) - $t0")")
  c1=$(server_cpu)
  cpus+=("$(r "($c1 - $c0) / $hz + $(awk '{print $1 + $2}' "$work/client.cpu")")")
done
objects=$(jq '.shards[0].objects' "$work/drift.json")
[ "$(jq -r '.drift' "$work/drift.json")" = false ] || { echo "unexpected drift" >&2; exit 1; }
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
echo "identical fleet: $shards shards x $objects objects: best $(head -1 <<<"$sorted") s, median $(sed -n "$(((runs + 1) / 2))p" <<<"$sorted") s (runs: ${times[*]})"
csorted=$(printf '%s\n' "${cpus[@]}" | sort -n)
cmed=$(sed -n "$(((runs + 1) / 2))p" <<<"$csorted")
echo "CPU per run (servers + shardctl): median $cmed s (runs: ${cpus[*]}); on $cores idle core(s): $(r "$cmed / $cores") s; load average now: $(cut -d' ' -f1-3 /proc/loadavg)"

# The floor any per-shard command pays: a connection and a trivial statement on each shard.
# The bench's shard DSNs log in as the cluster's superuser, which `query` refuses without
# --allow-privileged (query(1)); the floor is the same for any role.
c0=$(server_cpu)
t0=$(now)
/usr/bin/time -f "%U %S" -o "$work/client.cpu" "$bin/shardctl" query "select 1" --parallel 8 --allow-privileged --format csv > /dev/null
echo "floor (shardctl query 'select 1' --parallel 8): $(r "$(now) - $t0") s wall, $(r "($(server_cpu) - $c0) / $hz + $(awk '{print $1 + $2}' "$work/client.cpu")") s CPU"

# One column changed by hand on one shard: exit 1, the diff names it.
psql -XAtq "$(jq -r '.shards[] | select(.name == "s07") | .dsn' <("$bin/shardctl" shard list --format json))" \
  -c "ALTER TABLE t_100 ALTER COLUMN status SET DEFAULT 'open'"
t0=$(now)
rc=0
"$bin/shardctl" schema drift --parallel 8 > "$work/drift.txt" || rc=$?
echo "one shard drifted: exit $rc in $(r "$(now) - $t0") s: $(grep -c '^s07: 1 difference' "$work/drift.txt") report for s07"
[ "$rc" = 1 ] || { cat "$work/drift.txt" >&2; exit 1; }
