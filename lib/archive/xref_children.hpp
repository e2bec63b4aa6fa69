// Declared xrefs (`shardctl xref add`) as an archive run sees them. The database enforces no
// xref, so a run that took a parent row without its xref children would leave them as orphans,
// and `check --orphans --fix delete` would then delete them for good. An xref whose child table
// is sharded on the xref's map by the xref's route column keeps every child row on the shard of
// the parent it references: on that shard it is a foreign key in all but name, and archive treats
// it as one (without --cascade a referenced root row stays; with it the children go along and
// come back on restore). The children of any other xref may live on other shards, which a batch
// cannot take along atomically: a run names them in a note.
#pragma once

#include <vector>

#include "catalog/catalog.hpp"

namespace shardctl::archive {

struct XrefChildren {
  std::vector<catalog::Xref> same_shard;  // children always on their parent's shard
  std::vector<catalog::Xref> elsewhere;   // children that may be on another shard
};

XrefChildren xref_children(catalog::Store& store);

}  // namespace shardctl::archive
