# Sourced by the t_schema_*.sh tests, after lib.sh.

# schema_fleet NAME N: an empty fleet of N shard databases, all registered; shard i is
# $(shard_name i).
schema_fleet() {
  fresh_fleet "$1" --empty --shards "$2"
  local i
  for ((i = 1; i <= $2; i++)); do
    "$SHARDCTL_BIN/shardctl" shard add "$(shard_name "$i")" --dsn "$(shard_dsn "$i")" >/dev/null ||
      fail "cannot register shard $i"
  done
}

# mig DIR FILE: the migration file DIR/FILE with the text on stdin.
mig() { mkdir -p "$1"; cat > "$1/$2"; }

# history N: shard N's history as "name|success" lines in id order ("" without the table);
# success is t, f, or ? for a file that started and never recorded how it ended.
history() {
  [ "$(psql_shard "$1" -XAtc "select to_regclass('shardctl.schema_history') is null")" = f ] || return 0
  psql_shard "$1" -XAtc "select name || '|' || case when success then 't' when not success then 'f' else '?' end
                         from shardctl.schema_history order by id"
}

# shard_value N SQL: one value from shard N.
shard_value() { local n=$1; shift; psql_shard "$n" -XAtc "$*"; }

# JSON state of shard NAME in $STDOUT (an apply or status document).
json_state() { jq -r --arg s "$1" '.shards[] | select(.shard == $s) | .state' "$STDOUT"; }
