// --fix rehome: strays go to the shard their map routes them to. Per (source shard, map,
// target shard): the source's sharded tables are locked against writes (EXCLUSIVE: reads go
// on), the rows stream as binary COPY parents first into one target transaction, the target's
// count and order-independent checksum over the routed keys must grow by exactly the
// source's, the target commits, then the source deletes the same rows children first and
// commits. Strays routed to no shard, or to a shard that is down, stay where they are.
#pragma once

#include "check/check.hpp"
#include "check/fleet.hpp"

namespace shardctl::check {

void rehome_strays(const Fleet& fleet, const Options& options, Report& report);

}  // namespace shardctl::check
