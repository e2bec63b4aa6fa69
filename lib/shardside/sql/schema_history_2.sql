-- The step from shardctl.schema_history's first shape (`success boolean NOT NULL`, no `note`)
-- to the second (schema_history.sql). Run only when the table is of the first shape, so a
-- current table is never locked for it. Earlier versions still read the upgraded table: to
-- them an unfinished row looks failed.
ALTER TABLE shardctl.schema_history ALTER COLUMN success DROP NOT NULL, ADD COLUMN IF NOT EXISTS note text;
