// The statements `schema drift` reads a shard's catalogs with: one catalog each, raw columns,
// the server deparsing only what it must (constraints, defaults, triggers, views, routine
// signatures). A fresh backend pays mostly for what a statement makes it look up (functions,
// operators and catalogs, with empty caches) rather than for the rows: one query joining every
// catalog and formatting every definition in SQL cost about 20 ms more server CPU per shard.
// All of them go in one round trip, in one read-only transaction with search_path set to
// pg_catalog alone, so every name in a definition comes out schema-qualified the same way on
// every shard. Every object a user creates has an oid of at least 16384 (FirstNormalObjectId;
// initdb's own objects, information_schema included, are below it), so `oid >= 16384` lets the
// catalogs' oid indexes skip the built-in objects.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "shardio/raw_conn.hpp"

namespace shardctl::drift {

using Rows = std::vector<std::vector<std::string>>;

// The reads, in the order they are sent; Reads[kX] holds the rows of read kX.
enum Read : std::size_t {
  kNamespaces,
  kExtensions,
  kMembers,
  kRelations,
  kInherits,
  kTypeCollations,
  kDefaults,
  kAttributes,
  kConstraints,
  kAccessMethods,
  kOperatorClasses,
  kIndexes,
  kTriggers,
  kLanguages,
  kFunctions,
  kSequences,
  kTypes,
  kEnums,
  kReadCount
};
using Reads = std::vector<Rows>;

// Every read of the shard, in one round trip.
Reads read_catalogs(shardio::RawConn& shard, std::chrono::milliseconds timeout);

// Opens the read-only transaction the reads run in (for a later read of the same kind).
void begin_read(shardio::RawConn& shard, std::chrono::milliseconds timeout);

}  // namespace shardctl::drift
