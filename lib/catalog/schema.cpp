#include "catalog/schema.hpp"

#include "catalog/schema_routing.hpp"

namespace shardctl::catalog {
namespace {

// Version 1. Mappings keep their key space in one of three range columns, by key type:
// int/bigint keys and hash values in int8range, text keys in a C-collated text range (byte
// order), uuids in a uuid range. A point of a list map is stored as the degenerate range
// [k,k], so one exclusion constraint per column forbids overlapping ranges and duplicate
// points alike, whatever client writes the row.
constexpr std::string_view v1 = R"SQL(
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
)SQL";

// Version 2: the migration journal. An operation moves one or more key ranges between shards
// in batches; every batch's progress is journaled so `op resume` can finish it, and every
// write guard installed on a shard is recorded so a check can find one left behind.
constexpr std::string_view v2 = R"SQL(
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
)SQL";

// Version 3: a merge moves ranges from several shards onto one, so each batch names its own
// source shard (NULL in batches journaled by version 2: the operation's source); and each
// batch records how many distinct keys it holds, for progress (keys done / total).
constexpr std::string_view v3 = R"SQL(
ALTER TABLE shardctl.op_batches
  ADD COLUMN source_shard_id bigint REFERENCES shardctl.shards,
  ADD COLUMN keys bigint;
)SQL";

// Version 4: archive runs. A run fixes, per shard, the root table's primary-key upper bound
// when it starts, then walks the key in batches. Each batch's timestamp is journaled before
// its rows are delivered, so a redelivery replaces what an interrupted one left; whether the
// source deleted a batch is known from a receipt the shard commits with the DELETE.
constexpr std::string_view v4 = R"SQL(
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
)SQL";

// Version 5 (move speed): when each batch of a migration went offline (its keys refused to
// writers) and when it came back online on the target, so `op show` reports the offline
// windows a move cost its writers.
constexpr std::string_view v5_offline_windows = R"SQL(
ALTER TABLE shardctl.op_batches
  ADD COLUMN offline_at timestamptz,
  ADD COLUMN online_at timestamptz;
)SQL";

// Version 6: rebalance planning. A map's version changes whenever its mappings do (a trigger
// bumps maps.version), so a rebalance plan made against one version is refused once the map
// changed. Stats snapshots record what `stats collect` measured: per shard (database size,
// pg_stat_user_tables counters and their per-second deltas since the previous snapshot, the
// configured capacity and weight), per mapping (rows, bytes apportioned by rows, load, an
// equi-depth key histogram in the map's bound type) and per key (load from a load file).
// rebalance_runs/rebalance_steps journal `rebalance apply`: one row per step with the
// operation that runs it, so a killed apply resumes at its first unfinished step.
constexpr std::string_view v6_rebalance = R"SQL(
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
)SQL";

// Version 7: op_batches.keys for catalogs made without it. Commit 9342ae2 added the column to
// step 3 in place, after 2f887d6 had shipped step 3 without it: a catalog created at version 3
// by 2f887d6..3bc435d, upgraded since, lacks it, and `op list` and every migration fail on it
// (tests/integration/catalog_versions/v3_without_keys.sql).
constexpr std::string_view v7_batch_keys = R"SQL(
ALTER TABLE shardctl.op_batches ADD COLUMN IF NOT EXISTS keys bigint;
)SQL";

// Version 8: live bytes in stats snapshots, beside the physical sizes: what the rows occupy,
// without the dead space a purge or an archive leaves behind until it is reused (the planner
// balances these). NULL in snapshots taken before: the planner then falls back to the physical
// sizes and says so. Each histogram slice carries its own live_bytes in the JSON.
constexpr std::string_view v8_live_bytes = R"SQL(
ALTER TABLE shardctl.stats_shards ADD COLUMN live_bytes bigint;
ALTER TABLE shardctl.stats_mappings ADD COLUMN live_bytes bigint;
)SQL";

// Version 9: online moves (split/merge/move --online). A batch journals 'streaming' before the
// first of its replication objects is created on a shard (their names come from the operation
// id and the batch number, so a resumed or cancelled run finds and drops them), and 'copied'
// once its rows are on the target under the slot's snapshot.
constexpr std::string_view v9_online_steps = R"SQL(
ALTER TABLE shardctl.op_batches DROP CONSTRAINT op_batches_step_check;
ALTER TABLE shardctl.op_batches ADD CONSTRAINT op_batches_step_check
  CHECK (step IN ('planned', 'streaming', 'offline', 'copied', 'flipped', 'done'));
)SQL";

// Version 10: a shard's replication DSN, the connection string a subscription on another
// shard's server uses to reach it during an online move (shardctl-shard(1)): that server may
// need another host, port or user than shardctl's host does. NULL: the shard's DSN. Never empty
// (`shard set --replication-dsn ''` stores NULL), never a password, like dsn.
constexpr std::string_view v10_replication_dsn = R"SQL(
ALTER TABLE shardctl.shards ADD COLUMN replication_dsn text CHECK (replication_dsn <> '');
)SQL";

// Version 11: the source of truth of a reference table's rows (`table add-reference --source`,
// `table set --source`): the shard whose copy `check --references` compares the others with and
// `table sync-reference` copies from, or a database outside the fleet (source_dsn: no password,
// like a shard's). Neither: the majority of the copies. Forgetting a shard forgets it as a source.
constexpr std::string_view v11_reference_source = R"SQL(
ALTER TABLE shardctl.tables ADD COLUMN source_shard_id bigint REFERENCES shardctl.shards ON DELETE SET NULL,
  ADD COLUMN source_dsn text CHECK (source_dsn <> '');
ALTER TABLE shardctl.tables ADD CONSTRAINT tables_source_reference_only
  CHECK (kind = 'reference' OR (source_shard_id IS NULL AND source_dsn IS NULL));
ALTER TABLE shardctl.tables ADD CONSTRAINT tables_one_source CHECK (source_shard_id IS NULL OR source_dsn IS NULL);
)SQL";

}  // namespace

const std::vector<SchemaStep>& schema_steps() {
  // Step 12's text is in schema_routing.cpp (tests/integration/catalog_versions/extract.sh reads both).
  static const std::string_view v12_routing = routing_contract_sql();
  static const std::vector<SchemaStep> steps = {{1, v1}, {2, v2}, {3, v3}, {4, v4}, {5, v5_offline_windows},
                                                 {6, v6_rebalance}, {7, v7_batch_keys}, {8, v8_live_bytes},
                                                 {9, v9_online_steps}, {10, v10_replication_dsn},
                                                 {11, v11_reference_source}, {12, v12_routing}};
  return steps;
}

}  // namespace shardctl::catalog
