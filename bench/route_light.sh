#!/usr/bin/env bash
# bench/route_light.sh [BIN_DIR]: what a one-row write costs on a shard that gave keys of its
# map away and kept only the route floor (no range left: `op unfence`), with the light trigger
# shardctl_guard_route (lib/migrate/guard.hpp) and with the guard's triggers it replaces,
# put back by hand from their definitions. pgbench, one client, -T 5 per figure, two rounds:
# BEGIN; UPDATE customers ... one row; COMMIT, without and with SET LOCAL shardctl.route.
# bench/README.md ("the stale-route check of the guard's triggers") keeps the figures.
source "$(dirname "$0")/lib.sh" "${1:-}"
T=${BENCH_SECONDS:-5}
sandbox_up --no-fleet
"$bin/shardctl" sandbox fleet lbench --dir "$work/sb" --shards 2 --scale 1 --format json > "$work/fleet.json"
export SHARDCTL_CATALOG=$(jq -r .catalog "$work/fleet.json")
s1=$(jq -r '.shards[] | select(.name == "shard_1") | .dsn' "$work/fleet.json")
# shard_1's first mapping: split its upper half off to shard_2.
range=$("$bin/shardctl" mapping list --map customers --format json | jq -r '[.mappings[] | select(.shard == "shard_1")][0].range')
lo=${range%%..*}; hi=${range##*..}; lo=${lo:-1}  # an unbounded low end: keys from 1
at=$(( (lo + hi) / 2 ))
"$bin/shardctl" split --map customers --at "$at" --to shard_2 --batch-size 100000 >/dev/null 2>&1
op=$("$bin/shardctl" op list --format json | jq -r '[.operations[] | select(.kind == "split")][0].id')
# The guard's triggers while the fence stands, to put them back later.
psql -XAtq "$s1" -c "select pg_get_triggerdef(t.oid) || '; ALTER TABLE ' || t.tgrelid::regclass || ' ENABLE ALWAYS TRIGGER ' || t.tgname || ';'
                     from pg_trigger t where t.tgname like 'shardctl\_guard%' and t.tgparentid = 0" > "$work/heavy.sql"
"$bin/shardctl" op unfence "$op" -y >/dev/null
version=$(psql -XAtq "$s1" -c "select min_version from shardctl.route_floors")
map_id=$(psql -XAtq "$s1" -c "select map_id from shardctl.route_floors")
tables=$(psql -XAtq "$s1" -c "select string_agg(distinct tgrelid::regclass::text, ' ') from pg_trigger where tgname = 'shardctl_guard_route'")
key_hi=$(( at - 1 ))
printf '\\set id random(%s, %s)\nBEGIN;\nUPDATE customers SET name = name WHERE customer_id = :id;\nCOMMIT;\n' "$lo" "$key_hi" > "$work/plain.sql"
printf '\\set id random(%s, %s)\nBEGIN;\nSET LOCAL shardctl.route = '"'"'customers:%s'"'"';\nUPDATE customers SET name = name WHERE customer_id = :id;\nCOMMIT;\n' \
  "$lo" "$key_hi" "$version" > "$work/stated.sql"
lat() {
  local v
  v=$(pgbench -n -c 1 -T "$T" -f "$work/$1.sql" "$s1" 2>"$work/pgbench.err" | awk '/latency average/ { print $4 }')
  [ -n "$v" ] || { cat "$work/pgbench.err" "$work/$1.sql" >&2; exit 1; }
  echo "$v"
}
drop_all() {
  psql -XAtq "$s1" -c "DO \$\$ DECLARE r record; BEGIN FOR r IN SELECT tgname, tgrelid::regclass::text rel FROM pg_trigger
                        WHERE tgname LIKE 'shardctl\_guard%' AND tgparentid = 0 LOOP
                        EXECUTE format('DROP TRIGGER %I ON %s', r.tgname, r.rel); END LOOP; END \$\$" >/dev/null
}
light() {
  drop_all
  for t in $tables; do
    psql -XAtq "$s1" -c "CREATE TRIGGER shardctl_guard_route BEFORE INSERT OR UPDATE OR DELETE ON $t FOR EACH STATEMENT
                         WHEN (current_setting('shardctl.route', true) <> '') EXECUTE FUNCTION shardctl.guard_route('$map_id', 'customer_id');
                         ALTER TABLE $t ENABLE ALWAYS TRIGGER shardctl_guard_route" >/dev/null
  done
}
heavy() {
  drop_all
  psql -XAtq "$s1" -f "$work/heavy.sql" >/dev/null
}
printf 'floor %s; triggers on: %s\n' "$version" "$tables"
printf '| round | triggers | no version | SET LOCAL shardctl.route |\n|---|---|---|---|\n'
pristine=$(psql -XAtq "$s1" -c "select string_agg(pg_get_triggerdef(oid), ';' order by tgname, tgrelid) from pg_trigger where tgname like 'shardctl\_guard%'")
for round in 1 2; do
  if [ "$round" = 2 ]; then light; fi
  printf '| %s | light (shardctl_guard_route) | %s ms | %s ms |\n' "$round" "$(lat plain)" "$(lat stated)"
  heavy
  printf '| %s | heavy (as before) | %s ms | %s ms |\n' "$round" "$(lat plain)" "$(lat stated)"
done
# The light trigger made by hand in round 2 is the one `op unfence` made.
light
now_defs=$(psql -XAtq "$s1" -c "select string_agg(pg_get_triggerdef(oid), ';' order by tgname, tgrelid) from pg_trigger where tgname like 'shardctl\_guard%'")
[ "$now_defs" = "$pristine" ] || printf 'note: the light trigger made by hand differs from the one op unfence made:\n%s\n%s\n' "$pristine" "$now_defs"
