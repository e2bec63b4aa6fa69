# rebalance on schemas unlike the sample (zoo_lib.sh): every row starts on shard_1, the other
# shards are empty. A hash map over bigint keys (a step runs as a merge over a range of hash
# values), then a range map over text keys with quoted mixed-case names, a composite primary
# key, an identity and a stored generated column: stats collect, plan (--map), apply, and after
# each apply every row once on its routed shard, fingerprints unchanged, check clean.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/zoo_lib.sh"

zoo_fleet zoorebal
[ "$ZOO_SHARDS" -ge 3 ] || fail "want at least 3 shards, have $ZOO_SHARDS"
zoo_all_shards <<'SQL'
-- hash map: bigint keys, with the expression index hash batches use
create table streams (stream_id bigint primary key, name text not null);
create index streams_hash on streams ((hashint8extended(stream_id, 0)));
create table stream_events (stream_id bigint not null references streams, n int not null, payload jsonb,
                            primary key (stream_id, n));
create index stream_events_hash on stream_events ((hashint8extended(stream_id, 0)));
-- range map over text keys, quoted mixed-case names, identity and generated columns
create schema "Billing";
create table "Billing"."Accounts" ("Account Key" text primary key, "Opened" date not null, "Note" text);
create table "Billing"."Ledger Entries" (
  "Account Key" text not null references "Billing"."Accounts",
  "Entry No"    int not null,
  "Seq"         bigint generated always as identity,
  "Amount"      numeric(12,2) not null,
  "Tax"         numeric(12,2) generated always as (round("Amount" * 0.19, 2)) stored,
  "Memo"        text,
  primary key ("Account Key", "Entry No")
);
SQL
zoo_map streams hash bigint
zoo_map ledger range text
zoo_sharded stream_events streams stream_id
zoo_sharded streams streams stream_id
zoo_sharded '"Billing"."Ledger Entries"' ledger '"Account Key"'
zoo_sharded '"Billing"."Accounts"' ledger '"Account Key"'

# A few MB per map, so that the data outweighs what every database holds anyway.
psql_shard 1 -q -1 <<'SQL'
insert into streams select s, 'stream ' || s from generate_series(1, 2000) s;
insert into stream_events select s, n, jsonb_build_object('s', s, 'n', n, 'pad', repeat(md5(s::text || n), 3))
from generate_series(1, 2000) s, generate_series(1, 6) n;
-- Text keys in byte order: upper case < lower case < 'é' < 'Ω', spaces inside.
insert into "Billing"."Accounts"
select (array['Alpha', 'BRAVO', 'charlie', 'delta west', 'émile', 'Ωmega'])[1 + i % 6] || '-' || lpad(i::text, 5, '0'),
       date '2020-01-01' + i % 1000, 'note ' || i
from generate_series(1, 2000) i;
insert into "Billing"."Ledger Entries" ("Account Key", "Entry No", "Amount", "Memo")
select a."Account Key", e, (e * 7 + length(a."Account Key")) % 1000 + 0.25, repeat(md5(a."Account Key" || e), 3)
from "Billing"."Accounts" a, generate_series(1, 6) e;
analyze;
SQL
zoo_baseline
echo "# baseline: $ZOO_BASE_SHARDED"
zoo_verify "initial load"
echo "# loaded at $SECONDS s"

# on_shards TABLE: "N1 N2 ..." row counts of TABLE on every shard.
on_shards() {
  local i out=""
  for ((i = 1; i <= ZOO_SHARDS; i++)); do out+="${out:+ }$(psql_shard "$i" -XAtc "select count(*) from $1")"; done
  echo "$out"
}

# --- the hash map ---------------------------------------------------------------------------
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan --map streams -o hash.json
steps=$(jq '.plan.steps | length' hash.json)
[ "$steps" -ge 2 ] || fail "hash plan has $steps step(s): $(jq -c .plan.steps hash.json)"
assert_eq "$(jq '[.plan.steps[] | select(.map != "streams" or .from != "shard_1")] | length' hash.json)" "0"
# Each step runs as a merge over a range of hash values.
expect_exit 0 shardctl rebalance apply hash.json --dry-run
assert_eq "$(grep -c 'would run: shardctl merge --map streams --range ' "$STDOUT")" "$steps"
expect_exit 0 shardctl rebalance apply hash.json --parallel 2
assert_eq "$(grep -c ' done: ' "$STDOUT")" "$steps"
echo "# hash: $steps steps; mappings now $(zoo_mappings streams); stream_events per shard: $(on_shards stream_events)"
zoo_verify "hash map rebalanced"
echo "# hash map done at $SECONDS s"
# Data reached more than one of the empty shards.
moved=0
for ((i = 2; i <= ZOO_SHARDS; i++)); do
  n=$(psql_shard "$i" -XAtc "select count(*) from streams")
  [ "$n" = 0 ] || moved=$((moved + 1))
done
[ "$moved" -ge 2 ] || fail "streams reached $moved other shard(s), want at least 2: $(on_shards streams)"

# --- the text map, quoted names, identity and generated columns ------------------------------
# No VACUUM FULL: the rows the hash steps deleted from shard_1 no longer count in its live bytes.
expect_exit 0 shardctl stats collect
expect_exit 0 shardctl rebalance plan --map ledger -o text.json
steps=$(jq '.plan.steps | length' text.json)
[ "$steps" -ge 1 ] || fail "text plan has no step"
assert_eq "$(jq '[.plan.steps[] | select(.map != "ledger" or .from != "shard_1")] | length' text.json)" "0"
seq_before=$(psql_shard 1 -XAtc 'select max("Seq") from "Billing"."Ledger Entries"')
expect_exit 0 shardctl rebalance apply text.json
assert_eq "$(grep -c ' done: ' "$STDOUT")" "$steps"
echo "# text: $steps steps; mappings now $(zoo_mappings ledger); ledger entries per shard: $(on_shards '"Billing"."Ledger Entries"')"
zoo_verify "text map rebalanced"
moved=0
for ((i = 2; i <= ZOO_SHARDS; i++)); do
  n=$(psql_shard "$i" -XAtc 'select count(*) from "Billing"."Accounts"')
  [ "$n" = 0 ] || moved=$((moved + 1))
done
[ "$moved" -ge 1 ] || fail "no account left shard_1: $(on_shards '"Billing"."Accounts"')"
# Not over-drained: with the hash map gone from it, shard_1 keeps part of the text map.
[ "$(psql_shard 1 -XAtc 'select count(*) from "Billing"."Accounts"')" -gt 0 ] || fail "shard_1 gave every account away"
# Identity values kept, generated values computed, on every shard.
for ((i = 1; i <= ZOO_SHARDS; i++)); do
  assert_eq "$(psql_shard "$i" -XAtc 'select count(*) from "Billing"."Ledger Entries" where "Tax" <> round("Amount" * 0.19, 2) or "Seq" > '"$seq_before")" "0"
done
zoo_assert_settled "both maps rebalanced"
assert_eq "$(psql_catalog -XAtc "select count(*) from shardctl.rebalance_steps where status <> 'done'")" "0"
pass
