# schema drift on a schema unlike the sample, created shard by shard (so every object has a
# different oid on each shard): quoted mixed-case names, collations, operator classes, index
# options, INCLUDE and NULLS NOT DISTINCT, expression and partial indexes, partitions, a domain
# with checks, enums, identity, serial and generated columns, views, a materialized view,
# routines of every kind, a disabled trigger, an unlogged table with row level security and
# two extensions. Alike shards exit 0; each change made by hand on one shard exits 1 with both
# readable definitions, and the fleet converges once it is undone.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/schema_lib.sh"

schema_fleet drift_zoo 3
zoo() {
  psql -XAtq -v ON_ERROR_STOP=1 "$1" <<'SQL'
CREATE EXTENSION citext;
CREATE EXTENSION pg_trgm;
CREATE SCHEMA "Mixed Case";
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS integer NOT NULL DEFAULT 1 CHECK (VALUE > 0) CHECK (VALUE < 1000000);
CREATE COLLATION mycoll (provider = libc, locale = 'C');
CREATE TABLE "Mixed Case"."Order Lines" (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  "Name" text COLLATE "C" NOT NULL,
  n2 text COLLATE mycoll,
  qty posint,
  m mood DEFAULT 'ok',
  total numeric(10,2) GENERATED ALWAYS AS (qty * 2.5) STORED,
  created timestamptz DEFAULT now(),
  c citext,
  serialcol serial,
  UNIQUE NULLS NOT DISTINCT ("Name", n2),
  CHECK (qty < 500) NO INHERIT
);
CREATE INDEX ol_expr ON "Mixed Case"."Order Lines" (lower("Name")) WHERE qty > 5;
CREATE INDEX ol_opts ON "Mixed Case"."Order Lines" ("Name" text_pattern_ops DESC NULLS LAST, n2 COLLATE "C" NULLS FIRST)
  INCLUDE (created) WITH (fillfactor = 70);
CREATE INDEX ol_trgm ON "Mixed Case"."Order Lines" USING gin ("Name" gin_trgm_ops);
CREATE UNLOGGED TABLE ul (a int);
ALTER TABLE ul ENABLE ROW LEVEL SECURITY;
CREATE TABLE parted (k int PRIMARY KEY, v text) PARTITION BY RANGE (k);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM (0) TO (100);
CREATE INDEX parted_v ON parted (v);
CREATE TABLE child (id int PRIMARY KEY, ol bigint REFERENCES "Mixed Case"."Order Lines" (id) ON DELETE CASCADE DEFERRABLE);
CREATE VIEW v AS SELECT id, "Name" FROM "Mixed Case"."Order Lines" WHERE qty > 1;
CREATE MATERIALIZED VIEW mv AS SELECT 1 AS one;
CREATE FUNCTION f(a int, b text DEFAULT 'x') RETURNS int LANGUAGE sql IMMUTABLE STRICT SET search_path = public AS 'SELECT a';
CREATE PROCEDURE p(a int) LANGUAGE plpgsql AS $$ BEGIN NULL; END $$;
CREATE AGGREGATE myagg(int) (sfunc = int4pl, stype = int);
CREATE FUNCTION trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER t2 AFTER UPDATE ON child FOR EACH ROW EXECUTE FUNCTION trg();
ALTER TABLE child DISABLE TRIGGER t2;
CREATE SEQUENCE s1 AS integer START 5 INCREMENT 2 MAXVALUE 1000 CACHE 3 CYCLE;
SQL
}
# Shard by shard, with other objects created in between: no oid is the same on two shards.
for i in 1 2 3; do
  psql_shard "$i" -qc "create table filler_$i (a int)"
  zoo "$(shard_dsn "$i")"
done
for i in 1 2 3; do psql_shard "$i" -qc "drop table filler_$i"; done
expect_exit 0 shardctl schema drift
expect_stdout_contains "shard_1, shard_2, shard_3: no drift"

# Each change by hand on shard_2, the readable definitions of both sides, then undone.
drifts() {  # SQL-TO-DRIFT SQL-TO-UNDO EXPECTED-LINE...
  local change=$1 undo=$2; shift 2
  psql_shard 2 -qc "$change"
  expect_exit 1 shardctl schema drift
  expect_stdout_contains "shard_2: 1 difference(s)"
  local line
  for line in "$@"; do expect_stdout_contains "$line"; done
  psql_shard 2 -qc "$undo"
  expect_exit 0 shardctl schema drift
}
drifts 'alter table "Mixed Case"."Order Lines" alter column n2 type text collate "POSIX"' \
       'alter table "Mixed Case"."Order Lines" alter column n2 type text collate mycoll' \
       'different column:"Mixed Case"."Order Lines".n2' 'majority: text COLLATE public.mycoll' 'shard_2:  text COLLATE "POSIX"'
drifts 'drop index "Mixed Case".ol_opts; create index ol_opts on "Mixed Case"."Order Lines" ("Name" DESC NULLS LAST, n2 COLLATE "C" NULLS FIRST) include (created) with (fillfactor = 70)' \
       'drop index "Mixed Case".ol_opts; create index ol_opts on "Mixed Case"."Order Lines" ("Name" text_pattern_ops DESC NULLS LAST, n2 COLLATE "C" NULLS FIRST) include (created) with (fillfactor = 70)' \
       'different index:"Mixed Case".ol_opts' \
       'majority: CREATE INDEX ol_opts ON "Mixed Case"."Order Lines" USING btree ("Name" pg_catalog.text_pattern_ops DESC NULLS LAST, n2 COLLATE "C" NULLS FIRST) INCLUDE (created) WITH (fillfactor=70)' \
       'shard_2:  CREATE INDEX ol_opts ON "Mixed Case"."Order Lines" USING btree ("Name" DESC NULLS LAST, n2 COLLATE "C" NULLS FIRST) INCLUDE (created) WITH (fillfactor=70)'
drifts "alter type mood add value 'meh'" "drop type mood cascade; create type mood as enum ('sad', 'ok', 'happy'); alter table \"Mixed Case\".\"Order Lines\" add column m mood default 'ok'" \
       "different type:public.mood" "majority: ENUM ('sad', 'ok', 'happy')" "shard_2:  ENUM ('sad', 'ok', 'happy', 'meh')"
drifts 'alter domain posint drop constraint posint_check1' 'alter domain posint add constraint posint_check1 check (value < 1000000)' \
       'different type:public.posint' 'majority: DOMAIN integer NOT NULL DEFAULT 1 CHECK ((VALUE > 0)) CHECK ((VALUE < 1000000))' \
       'shard_2:  DOMAIN integer NOT NULL DEFAULT 1 CHECK ((VALUE > 0))'
drifts 'alter table child enable trigger t2' 'alter table child disable trigger t2' \
       'different trigger:public.child.t2' '(disabled)'
pass
