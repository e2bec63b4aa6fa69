-- shardctl.schema_history on a shard (lib/shardside/schema_history.hpp), in its current shape:
-- one row per attempt to apply a migration file; failures stay as the audit trail and a later
-- success of the same file closes them. `checksum` is "<algorithm>:<hex>" so another algorithm
-- can follow. `success` NULL: a no-transaction file started and has not (or never) recorded its
-- outcome. `note` says why a row was written by hand (`schema repair`). Idempotent; a table of
-- the first shape is brought to this one by schema_history_2.sql.
CREATE SCHEMA IF NOT EXISTS shardctl;
CREATE TABLE IF NOT EXISTS shardctl.schema_history (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  version     text,
  name        text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('versioned', 'repeatable', 'baseline')),
  checksum    text,
  applied_at  timestamptz NOT NULL DEFAULT now(),
  duration_ms bigint NOT NULL DEFAULT 0,
  applied_by  text NOT NULL DEFAULT current_user,
  success     boolean,
  note        text,
  CHECK ((kind = 'repeatable') = (version IS NULL))
);
