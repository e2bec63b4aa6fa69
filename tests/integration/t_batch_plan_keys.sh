# Batch planning counts the distinct keys of every moving table, but skips reading a child's keys
# when a foreign key proves them all present in a parent (lib/migrate/plan.cpp, keys_covered):
# a validated FK from the child's key column to the parent's key column, MATCH FULL or with
# every referencing column NOT NULL. Keys a child holds beyond its parent's still count where
# nothing proves them covered: an FK under MATCH SIMPLE with a nullable column, an FK NOT VALID,
# no FK. With --batch-size 1 each distinct key is one batch, so the batch count is the number of
# distinct keys the planner saw; the split then moves every row.
source "$(dirname "$0")/lib.sh"

fresh_fleet bpk --shards 2
for i in 1 2; do
  psql_shard "$i" -qc "
    create table p (k int primary key, tag int, unique (k, tag));
    create table covered (k int not null references p, id int, primary key (k, id));
    create table covered_full (k int, tag int, id int, primary key (k, id), foreign key (k, tag) references p (k, tag) match full);
    create table simple_nullable (k int, tag int, id int, primary key (k, id), foreign key (k, tag) references p (k, tag));
    create table not_valid (k int not null, id int, primary key (k, id));
    create table no_fk (k int, id int, primary key (k, id))"
done
psql_shard 1 -qc "
  insert into p select g, g from generate_series(1, 20) g;
  insert into covered select g, i from generate_series(1, 20) g, generate_series(1, 3) i;
  insert into covered_full select g, g, g from generate_series(1, 20) g;
  -- (21, NULL) and (22, NULL): MATCH SIMPLE checks neither, so keys 21 and 22 exist only here.
  insert into simple_nullable values (5, 5, 1), (21, null, 2), (22, null, 3);
  -- 23 has no parent; the FK added NOT VALID leaves it there.
  insert into not_valid values (7, 1), (23, 2);
  alter table not_valid add foreign key (k) references p not valid;
  insert into no_fk values (24, 1), (9, 2);
  -- 25: an orphan the FK would refuse, written past it; the planner trusts the FK, so it does
  -- not count 25 (proof that it did not read covered's keys), yet the batches still hold it.
  set session_replication_role = replica;
  insert into covered values (25, 1);
  reset session_replication_role;
  analyze"
shardctl map create m --kind range --key-type int >/dev/null
shardctl mapping add --map m --range ..1000 --shard shard_1 >/dev/null
shardctl mapping add --map m --range 1000.. --shard shard_2 >/dev/null
for t in p covered covered_full simple_nullable not_valid no_fk; do
  shardctl table add-sharded "public.$t" --map m --key k >/dev/null
done

# Keys 1..20 (p and its covered children), 21, 22 (simple_nullable), 23 (not_valid), 24 (no_fk);
# not 25 (covered's orphan).
expect_exit 0 shardctl split --map m --at 0 --to shard_2 --batch-size 1 --dry-run --format json
assert_eq "$(jq -r '.batches | length' "$STDOUT")" "24"
assert_eq "$(jq -r '[.batches[].keys] | add' "$STDOUT")" "24"

# Without the uncovered children, only p's keys count: the covered children add none.
for t in simple_nullable not_valid no_fk; do shardctl table remove "public.$t" >/dev/null; done
for i in 1 2; do psql_shard "$i" -qc "drop table simple_nullable, not_valid, no_fk"; done
expect_exit 0 shardctl split --map m --at 0 --to shard_2 --batch-size 1 --dry-run --format json
assert_eq "$(jq -r '.batches | length' "$STDOUT")" "20"

# A covered child's rows move with their batches all the same.
expect_exit 0 shardctl split --map m --at 0 --to shard_2 --batch-size 5
assert_eq "$(psql_shard 2 -XAtc 'select count(*) from p') $(psql_shard 2 -XAtc 'select count(*) from covered') $(psql_shard 2 -XAtc 'select count(*) from covered_full')" "20 61 20"
assert_eq "$(psql_shard 1 -XAtc 'select (select count(*) from p) + (select count(*) from covered) + (select count(*) from covered_full)')" "0"
