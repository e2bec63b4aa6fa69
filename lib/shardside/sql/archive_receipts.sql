-- shardctl.archive_receipts on a shard that archive runs delete from (lib/shardside/receipts.hpp):
-- the source commits one row per batch together with the batch's DELETE, so a resumed run
-- knows whether an interrupted batch's rows already left the shard. Idempotent.
CREATE SCHEMA IF NOT EXISTS shardctl;
CREATE TABLE IF NOT EXISTS shardctl.archive_receipts (
  op_id      uuid NOT NULL,
  batch_no   integer NOT NULL,
  tables     jsonb NOT NULL,
  refused    bigint NOT NULL DEFAULT 0,
  deleted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (op_id, batch_no)
);
