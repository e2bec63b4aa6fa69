-- The catalog `shardctl init` of commit 2f887d6 created: schema version 3.
-- Step 3 in the form it first had: op_batches without the keys column, which commit 9342ae2
-- then added to step 3 itself. Commits 2f887d6 to 3bc435d made catalogs of this form.
-- Lines up to the catalog_version row are `./extract.sh 2f887d6` (the schema steps of that
-- commit's lib/catalog/schema.cpp, verbatim); the data after it is hand-written: at least one
-- row in every table, in the columns that version had. itest_catalog_upgrade.cpp loads this
-- file into an empty database, then upgrades it with `init`.

CREATE EXTENSION IF NOT EXISTS btree_gist;
CREATE SCHEMA shardctl;

CREATE TYPE shardctl.textrange AS RANGE (subtype = text, collation = "C");
CREATE TYPE shardctl.uuidrange AS RANGE (subtype = uuid);

CREATE TABLE shardctl.catalog_version (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version    integer NOT NULL,
  upgraded_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shardctl.shards (
  shard_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_.-]{0,62}$'),
  dsn        text NOT NULL,
  status     text NOT NULL DEFAULT 'online' CHECK (status IN ('online', 'readonly', 'offline')),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shardctl.maps (
  map_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_.-]{0,62}$'),
  kind       text NOT NULL CHECK (kind IN ('list', 'range', 'hash')),
  key_type   text NOT NULL CHECK (key_type IN ('int', 'bigint', 'text', 'uuid')),
  created_at timestamptz NOT NULL DEFAULT now(),
  -- hash maps route over 64-bit hash values, whatever the key type
  CHECK (kind <> 'hash' OR key_type IN ('int', 'bigint', 'text', 'uuid'))
);

CREATE TABLE shardctl.mappings (
  mapping_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  map_id     bigint NOT NULL REFERENCES shardctl.maps ON DELETE CASCADE,
  shard_id   bigint NOT NULL REFERENCES shardctl.shards,
  is_point   boolean NOT NULL DEFAULT false,
  int_range  int8range,
  text_range shardctl.textrange,
  uuid_range shardctl.uuidrange,
  status     text NOT NULL DEFAULT 'online' CHECK (status IN ('online', 'offline')),
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (num_nonnulls(int_range, text_range, uuid_range) = 1),
  CHECK (int_range IS NULL OR NOT isempty(int_range)),
  CHECK (text_range IS NULL OR NOT isempty(text_range)),
  CHECK (uuid_range IS NULL OR NOT isempty(uuid_range)),
  CONSTRAINT mappings_int_no_overlap EXCLUDE USING gist (map_id WITH =, int_range WITH &&),
  CONSTRAINT mappings_text_no_overlap EXCLUDE USING gist (map_id WITH =, text_range WITH &&),
  CONSTRAINT mappings_uuid_no_overlap EXCLUDE USING gist (map_id WITH =, uuid_range WITH &&)
);
CREATE INDEX ON shardctl.mappings (shard_id);

CREATE TABLE shardctl.tables (
  table_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       text NOT NULL UNIQUE,
  kind       text NOT NULL CHECK (kind IN ('sharded', 'reference')),
  map_id     bigint REFERENCES shardctl.maps,
  key_column text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'sharded') = (map_id IS NOT NULL AND key_column IS NOT NULL)),
  CHECK (kind = 'sharded' OR (map_id IS NULL AND key_column IS NULL))
);

CREATE TABLE shardctl.xrefs (
  xref_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name           text NOT NULL UNIQUE,
  child_table    text NOT NULL REFERENCES shardctl.tables (name),
  child_columns  text[] NOT NULL,
  parent_table   text NOT NULL REFERENCES shardctl.tables (name),
  parent_columns text[] NOT NULL,
  route_column   text NOT NULL,
  map_id         bigint NOT NULL REFERENCES shardctl.maps,
  created_at     timestamptz NOT NULL DEFAULT now(),
  CHECK (cardinality(child_columns) = cardinality(parent_columns) AND cardinality(child_columns) > 0)
);

-- Operations (split / merge / move / archive / rollout). A live operation holds a lease on
-- the key range it works on; catalog changes that would pull that range from under it are
-- refused.
CREATE TABLE shardctl.operations (
  op_id         uuid PRIMARY KEY,
  kind          text NOT NULL,
  map_id        bigint REFERENCES shardctl.maps,
  int_range     int8range,
  text_range    shardctl.textrange,
  uuid_range    shardctl.uuidrange,
  args          jsonb NOT NULL DEFAULT '{}',
  status        text NOT NULL DEFAULT 'running'
                CHECK (status IN ('planned', 'running', 'paused', 'failed', 'cancelled', 'done')),
  phase         text,
  progress      jsonb NOT NULL DEFAULT '{}',
  cancel_requested boolean NOT NULL DEFAULT false,
  error         text,
  lease_holder  text,
  lease_until   timestamptz,
  fencing_token bigint NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
ALTER TABLE shardctl.operations
  ADD COLUMN source_shard_id bigint REFERENCES shardctl.shards,
  ADD COLUMN target_shard_id bigint REFERENCES shardctl.shards,
  ADD COLUMN batch_size integer,
  ADD COLUMN heartbeat_at timestamptz;

CREATE TABLE shardctl.op_batches (
  op_id       uuid NOT NULL REFERENCES shardctl.operations ON DELETE CASCADE,
  batch_no    integer NOT NULL,
  int_range   int8range,
  text_range  shardctl.textrange,
  uuid_range  shardctl.uuidrange,
  step        text NOT NULL DEFAULT 'planned'
              CHECK (step IN ('planned', 'offline', 'copied', 'flipped', 'done')),
  rows_moved  bigint NOT NULL DEFAULT 0,
  checksum    text,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (op_id, batch_no),
  CHECK (num_nonnulls(int_range, text_range, uuid_range) = 1)
);

CREATE TABLE shardctl.guards (
  op_id      uuid NOT NULL REFERENCES shardctl.operations ON DELETE CASCADE,
  shard_id   bigint NOT NULL REFERENCES shardctl.shards,
  table_name text NOT NULL,
  installed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (op_id, shard_id, table_name)
);
ALTER TABLE shardctl.op_batches ADD COLUMN source_shard_id bigint REFERENCES shardctl.shards;
INSERT INTO shardctl.catalog_version (version) VALUES (3);

-- Data: three shards (online, readonly, offline); range, list and hash maps over bigint, text
-- and uuid keys, with bounded, unbounded and point mappings; sharded and reference tables; an
-- xref; operations.
INSERT INTO shardctl.shards (name, dsn, status) VALUES
  ('a', 'host=/run/postgresql port=5432 dbname=shard_a', 'online'),
  ('b', 'host=/run/postgresql port=5432 dbname=shard_b', 'readonly'),
  ('c', 'host=/run/postgresql port=5432 dbname=shard_c', 'offline');
INSERT INTO shardctl.maps (name, kind, key_type) VALUES
  ('users', 'range', 'bigint'), ('tenants', 'list', 'text'), ('devices', 'hash', 'uuid'),
  ('regions', 'range', 'text'), ('sessions', 'list', 'uuid');
INSERT INTO shardctl.mappings (map_id, shard_id, is_point, int_range, text_range, uuid_range, status)
SELECT m.map_id, s.shard_id, v.is_point, v.i::int8range, v.t::shardctl.textrange, v.u::shardctl.uuidrange, v.status
FROM (VALUES
  ('users', 'a', false, '[,1000)', NULL, NULL, 'online'),
  ('users', 'b', false, '[1000,)', NULL, NULL, 'offline'),
  ('tenants', 'a', true, NULL, '[acme,acme]', NULL, 'online'),
  ('tenants', 'c', true, NULL, '[globex,globex]', NULL, 'online'),
  ('devices', 'a', false, '[,0)', NULL, NULL, 'online'),
  ('devices', 'b', false, '[0,)', NULL, NULL, 'online'),
  ('regions', 'a', false, NULL, '[,m)', NULL, 'online'),
  ('regions', 'b', false, NULL, '[m,)', NULL, 'online'),
  ('sessions', 'a', true, NULL, NULL,
   '[a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11,a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11]', 'online')
) v(map, shard, is_point, i, t, u, status)
JOIN shardctl.maps m ON m.name = v.map
JOIN shardctl.shards s ON s.name = v.shard;
INSERT INTO shardctl.tables (name, kind, map_id, key_column)
SELECT v.name, v.kind, m.map_id, v.key_column
FROM (VALUES ('public.users', 'sharded', 'users', 'user_id'),
             ('public.orders', 'sharded', 'users', 'user_id'),
             ('public.countries', 'reference', NULL, NULL)) v(name, kind, map, key_column)
LEFT JOIN shardctl.maps m ON m.name = v.map;
INSERT INTO shardctl.xrefs (name, child_table, child_columns, parent_table, parent_columns, route_column, map_id)
SELECT 'orders_users', 'public.orders', '{user_id}', 'public.users', '{user_id}', 'user_id', map_id
FROM shardctl.maps WHERE name = 'users';
INSERT INTO shardctl.operations (op_id, kind, map_id, int_range, text_range, args, status, phase, progress,
                                 error, lease_holder, lease_until, fencing_token, created_at, updated_at, finished_at)
SELECT v.op_id::uuid, v.kind, m.map_id, v.i::int8range, v.t::shardctl.textrange, v.args::jsonb, v.status, v.phase,
       v.progress::jsonb, v.error, v.lease_holder, v.lease_until::timestamptz, v.fencing_token,
       '2026-11-20 10:00:00+00', '2026-11-20 10:05:00+00', v.finished_at::timestamptz
FROM (VALUES
  ('6f1c0c5e-0000-4000-8000-000000000001', 'split', 'users', '[500,1000)', NULL, '{"target": "b"}', 'done', 'done',
   '{"rows_done": 40}', NULL, NULL, NULL, 1, '2026-11-20 10:05:00+00'),
  ('6f1c0c5e-0000-4000-8000-000000000002', 'move', 'tenants', NULL, '[acme,acme]', '{"target": "c"}', 'failed', 'copy',
   '{}', 'shard c is offline', 'host1:4242', '2026-11-20 10:06:00+00', 3, NULL)
) v(op_id, kind, map, i, t, args, status, phase, progress, error, lease_holder, lease_until, fencing_token, finished_at)
JOIN shardctl.maps m ON m.name = v.map;

-- Version 2: the migration journal: an operation's shards and batches, a guard left behind.
UPDATE shardctl.operations SET source_shard_id = (SELECT shard_id FROM shardctl.shards WHERE name = 'a'),
                               target_shard_id = (SELECT shard_id FROM shardctl.shards WHERE name = 'b'),
                               batch_size = 20, heartbeat_at = '2026-11-20 10:04:00+00'
 WHERE op_id = '6f1c0c5e-0000-4000-8000-000000000001';
INSERT INTO shardctl.op_batches (op_id, batch_no, int_range, step, rows_moved, checksum, updated_at) VALUES
  ('6f1c0c5e-0000-4000-8000-000000000001', 0, '[500,750)', 'done', 20, 'c0ffee01', '2026-11-20 10:02:00+00'),
  ('6f1c0c5e-0000-4000-8000-000000000001', 1, '[750,1000)', 'done', 20, 'c0ffee02', '2026-11-20 10:04:00+00');
INSERT INTO shardctl.op_batches (op_id, batch_no, text_range, step) VALUES
  ('6f1c0c5e-0000-4000-8000-000000000002', 0, '[acme,acme]', 'offline');
INSERT INTO shardctl.guards (op_id, shard_id, table_name, installed_at)
SELECT '6f1c0c5e-0000-4000-8000-000000000002', shard_id, 'public.users', '2026-11-20 10:01:00+00'
FROM shardctl.shards WHERE name = 'a';

-- Version 3 as commit 2f887d6 made it: each batch names its source shard (no key count yet).
UPDATE shardctl.op_batches SET source_shard_id = (SELECT shard_id FROM shardctl.shards WHERE name = 'a');
