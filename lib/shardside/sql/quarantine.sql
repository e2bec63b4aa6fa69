-- Schema shardctl_quarantine on a shard (lib/shardside/quarantine.hpp): `shardctl check --fix
-- --quarantine` moves bad rows, and the rows that reference them, into one table per source
-- table here (shardctl_quarantine."schema.table", LIKE the source), listed in the manifest;
-- `check --restore` puts them back and drops the schema. Idempotent.
CREATE SCHEMA IF NOT EXISTS shardctl_quarantine;
CREATE TABLE IF NOT EXISTS shardctl_quarantine.manifest (
  quarantine_table text PRIMARY KEY,
  source_schema    text NOT NULL,
  source_table     text NOT NULL
);
