// Reading a shard's structure from pg_catalog: every table, view, column (type,
// collation, default, nullability, identity, generated), index (as pg_get_indexdef writes it, INVALID
// marked; one that implements a primary key, unique or exclusion constraint is compared
// through the constraint), constraint (pg_get_constraintdef; a CHECK by its expression tree
// until shards differ), trigger (pg_get_triggerdef and enabled state),
// function and procedure (identity signature, result, language, volatility, strictness,
// security, SET options, and an md5 of the body), sequence (type, start, increment, bounds,
// cache, cycle; not its current value), enum and domain type, schema and extension (version).
//
// Left out: the system schemas (pg_catalog, information_schema, pg_toast*, pg_temp_*),
// shardctl's own schemas (shardside::own_schemas), objects that belong to an extension
// (the extension's version stands for them), internal triggers (foreign keys), and shardctl's
// write-guard triggers (shardside::guard_triggers), so a move in progress is not drift.
// Ownership and privileges are not compared.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "drift/object.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::drift {

// The shard's objects, sorted by key. Runs in a read-only transaction with search_path set to
// pg_catalog alone, so every name in a definition comes out schema-qualified the same way on
// every shard.
std::vector<Object> read_objects(shardio::RawConn& shard, std::chrono::milliseconds timeout);

// Readable definitions (pg_get_constraintdef) of the objects with these oids, in their order:
// what replaces the stand-ins of read_objects where shards differ.
std::vector<std::string> read_definitions(shardio::RawConn& shard, const std::vector<std::string>& oids,
                                          std::chrono::milliseconds timeout);

}  // namespace shardctl::drift
