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
ALTER TABLE shardctl.op_batches
  ADD COLUMN source_shard_id bigint REFERENCES shardctl.shards,
  ADD COLUMN keys bigint;
CREATE TABLE shardctl.archive_shards (
  op_id        uuid NOT NULL REFERENCES shardctl.operations ON DELETE CASCADE,
  shard_id     bigint NOT NULL REFERENCES shardctl.shards,
  upper_key    text[],
  cursor_key   text[],
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done')),
  batches_done integer NOT NULL DEFAULT 0,
  rows         jsonb NOT NULL DEFAULT '{}',
  refused      bigint NOT NULL DEFAULT 0,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (op_id, shard_id)
);

CREATE TABLE shardctl.archive_batches (
  op_id       uuid NOT NULL,
  shard_id    bigint NOT NULL,
  batch_no    integer NOT NULL,
  low_key     text[],
  high_key    text[] NOT NULL,
  archived_at timestamptz NOT NULL,
  step        text NOT NULL DEFAULT 'selected' CHECK (step IN ('selected', 'delivered', 'deleted')),
  tables      jsonb NOT NULL DEFAULT '{}',
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (op_id, shard_id, batch_no),
  FOREIGN KEY (op_id, shard_id) REFERENCES shardctl.archive_shards ON DELETE CASCADE
);
ALTER TABLE shardctl.op_batches
  ADD COLUMN offline_at timestamptz,
  ADD COLUMN online_at timestamptz;
ALTER TABLE shardctl.maps ADD COLUMN version bigint NOT NULL DEFAULT 1;

CREATE FUNCTION shardctl.bump_map_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE shardctl.maps SET version = version + 1 WHERE map_id = OLD.map_id;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_OP = 'INSERT' OR NEW.map_id IS DISTINCT FROM OLD.map_id) THEN
    UPDATE shardctl.maps SET version = version + 1 WHERE map_id = NEW.map_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER mappings_bump_map_version AFTER INSERT OR UPDATE OR DELETE ON shardctl.mappings
  FOR EACH ROW EXECUTE FUNCTION shardctl.bump_map_version();

CREATE TABLE shardctl.stats_snapshots (
  snapshot_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  taken_at    timestamptz NOT NULL DEFAULT now(),
  map_filter  text,
  load_file   text,
  fingerprint text NOT NULL,
  complete    boolean NOT NULL,
  maps        jsonb NOT NULL DEFAULT '{}'
);

CREATE TABLE shardctl.stats_shards (
  snapshot_id      bigint NOT NULL REFERENCES shardctl.stats_snapshots ON DELETE CASCADE,
  shard            text NOT NULL,
  status           text NOT NULL,
  error            text,
  db_bytes         bigint,
  counters         jsonb NOT NULL DEFAULT '{}',
  deltas           jsonb NOT NULL DEFAULT '{}',
  interval_seconds double precision,
  capacity_bytes   bigint,
  weight           double precision NOT NULL DEFAULT 1,
  PRIMARY KEY (snapshot_id, shard)
);

CREATE TABLE shardctl.stats_mappings (
  snapshot_id bigint NOT NULL REFERENCES shardctl.stats_snapshots ON DELETE CASCADE,
  mapping_id  bigint NOT NULL,
  map         text NOT NULL,
  map_version bigint NOT NULL,
  shard       text NOT NULL,
  is_point    boolean NOT NULL,
  low         text,
  high        text,
  rows        bigint NOT NULL,
  bytes       bigint NOT NULL,
  load        double precision NOT NULL DEFAULT 0,
  histogram   jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (snapshot_id, mapping_id)
);

CREATE TABLE shardctl.stats_keys (
  snapshot_id bigint NOT NULL REFERENCES shardctl.stats_snapshots ON DELETE CASCADE,
  map         text NOT NULL,
  key         text NOT NULL,
  load        double precision NOT NULL,
  PRIMARY KEY (snapshot_id, map, key)
);

CREATE TABLE shardctl.rebalance_runs (
  plan_fingerprint text PRIMARY KEY,
  plan             jsonb NOT NULL,
  started_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);

CREATE TABLE shardctl.rebalance_steps (
  plan_fingerprint text NOT NULL REFERENCES shardctl.rebalance_runs ON DELETE CASCADE,
  step_no          integer NOT NULL,
  op_id            uuid,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'done', 'failed')),
  error            text,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (plan_fingerprint, step_no)
);
ALTER TABLE shardctl.op_batches ADD COLUMN IF NOT EXISTS keys bigint;
ALTER TABLE shardctl.stats_shards ADD COLUMN live_bytes bigint;
ALTER TABLE shardctl.stats_mappings ADD COLUMN live_bytes bigint;
ALTER TABLE shardctl.op_batches DROP CONSTRAINT op_batches_step_check;
ALTER TABLE shardctl.op_batches ADD CONSTRAINT op_batches_step_check
  CHECK (step IN ('planned', 'streaming', 'offline', 'copied', 'flipped', 'done'));
ALTER TABLE shardctl.shards ADD COLUMN replication_dsn text CHECK (replication_dsn <> '');
ALTER TABLE shardctl.tables ADD COLUMN source_shard_id bigint REFERENCES shardctl.shards ON DELETE SET NULL,
  ADD COLUMN source_dsn text CHECK (source_dsn <> '');
ALTER TABLE shardctl.tables ADD CONSTRAINT tables_source_reference_only
  CHECK (kind = 'reference' OR (source_shard_id IS NULL AND source_dsn IS NULL));
ALTER TABLE shardctl.tables ADD CONSTRAINT tables_one_source CHECK (source_shard_id IS NULL OR source_dsn IS NULL);
INSERT INTO shardctl.catalog_version (version) VALUES (11);

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

-- Version 3: each batch names its source shard and counts its keys.
UPDATE shardctl.op_batches SET source_shard_id = (SELECT shard_id FROM shardctl.shards WHERE name = 'a'),
                               keys = 10 + batch_no;

-- Version 4: an archive run, one shard's progress and two of its batches.
INSERT INTO shardctl.operations (op_id, kind, args, status, created_at, updated_at)
VALUES ('6f1c0c5e-0000-4000-8000-000000000003', 'archive', '{"job": "old_orders"}', 'running',
        '2026-11-21 08:00:00+00', '2026-11-21 08:10:00+00');
INSERT INTO shardctl.archive_shards (op_id, shard_id, upper_key, cursor_key, state, batches_done, rows, refused, updated_at)
SELECT '6f1c0c5e-0000-4000-8000-000000000003', shard_id, '{9000}', '{4000}', 'running', 2,
       '{"public.orders": 120}', 1, '2026-11-21 08:10:00+00'
FROM shardctl.shards WHERE name = 'a';
INSERT INTO shardctl.archive_batches (op_id, shard_id, batch_no, low_key, high_key, archived_at, step, tables, updated_at)
SELECT '6f1c0c5e-0000-4000-8000-000000000003', shard_id, v.batch_no, v.low_key::text[], v.high_key::text[],
       '2026-11-21 08:05:00+00', v.step, v.tables::jsonb, '2026-11-21 08:10:00+00'
FROM shardctl.shards, (VALUES (1, NULL, '{2000}', 'deleted', '{"public.orders": 60}'),
                              (2, '{2000}', '{4000}', 'delivered', '{"public.orders": 60}')) v(batch_no, low_key, high_key, step, tables)
WHERE name = 'a';

-- Version 5: the offline window of each batch.
UPDATE shardctl.op_batches SET offline_at = '2026-11-20 10:01:00+00', online_at = '2026-11-20 10:01:02+00'
 WHERE step = 'done';
UPDATE shardctl.op_batches SET offline_at = '2026-11-20 10:01:00+00' WHERE step = 'offline';

-- Version 6: a stats snapshot (a shard, a mapping with its histogram, a hot key) and a
-- rebalance run with one step done.
INSERT INTO shardctl.stats_snapshots (taken_at, map_filter, load_file, fingerprint, complete, maps)
VALUES ('2026-11-23 16:00:00+00', 'users', 'load.csv', 'f00d', true, '{"users": {"version": 3}}');
INSERT INTO shardctl.stats_shards (snapshot_id, shard, status, db_bytes, counters, deltas, interval_seconds,
                                   capacity_bytes, weight)
SELECT snapshot_id, 'a', 'online', 81920, '{"n_tup_ins": 40}', '{"n_tup_ins": 0.5}', 80, 1048576, 1.5
FROM shardctl.stats_snapshots;
INSERT INTO shardctl.stats_mappings (snapshot_id, mapping_id, map, map_version, shard, is_point, low, high, rows,
                                     bytes, load, histogram)
SELECT snapshot_id, 1, 'users', 3, 'a', false, NULL, '1000', 400, 40960, 2.5,
       '[{"low": "0", "rows": 200, "bytes": 20480}, {"low": "500", "rows": 200, "bytes": 20480}]'
FROM shardctl.stats_snapshots;
INSERT INTO shardctl.stats_keys (snapshot_id, map, key, load)
SELECT snapshot_id, 'users', '42', 9.5 FROM shardctl.stats_snapshots;
INSERT INTO shardctl.rebalance_runs (plan_fingerprint, plan, started_at)
VALUES ('beef', '{"steps": [{"kind": "move", "map": "users"}]}', '2026-11-23 16:05:00+00');
INSERT INTO shardctl.rebalance_steps (plan_fingerprint, step_no, op_id, status, updated_at)
VALUES ('beef', 0, '6f1c0c5e-0000-4000-8000-000000000001', 'done', '2026-11-23 16:06:00+00');

-- Version 9: an online move whose batch is streaming (its replication objects may exist).
INSERT INTO shardctl.operations (op_id, kind, map_id, int_range, args, status, phase, source_shard_id, target_shard_id,
                                 batch_size, created_at, updated_at)
SELECT '6f1c0c5e-0000-4000-8000-000000000004', 'move', m.map_id, '[2000,2001)',
       '{"target": "a", "online": {"max_lag_seconds": 1, "cutover_timeout_ms": 500}}', 'paused', 'copy', s.shard_id,
       t.shard_id, 1, '2026-11-26 09:00:00+00', '2026-11-26 09:01:00+00'
FROM shardctl.maps m, shardctl.shards s, shardctl.shards t
WHERE m.name = 'users' AND s.name = 'b' AND t.name = 'a';
INSERT INTO shardctl.op_batches (op_id, batch_no, int_range, step, source_shard_id, keys, updated_at) VALUES
  ('6f1c0c5e-0000-4000-8000-000000000004', 1, '[2000,2001)', 'streaming',
   (SELECT shard_id FROM shardctl.shards WHERE name = 'b'), 1, '2026-11-26 09:01:00+00');

-- Version 10: a shard's replication DSN.
UPDATE shardctl.shards SET replication_dsn = 'host=10.0.0.7 port=5432 dbname=shard_a' WHERE name = 'a';

-- Version 11: a reference table's source of truth (a shard), and one outside the fleet.
UPDATE shardctl.tables SET source_shard_id = (SELECT shard_id FROM shardctl.shards WHERE name = 'a')
 WHERE name = 'public.countries';
INSERT INTO shardctl.tables (name, kind, source_dsn) VALUES ('public.currencies', 'reference', 'host=10.0.0.9 dbname=refdata');
