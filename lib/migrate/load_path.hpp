// Which way a move loads and purges rows. The fast path runs the target's COPY and the source's
// DELETEs with session_replication_role = replica, so PostgreSQL skips the foreign-key
// triggers (and other origin-only triggers) it would otherwise fire per row, when shardctl has
// proven what those triggers would check:
//   load  - every foreign key of the moving tables on the target points to a registered
//           reference table, or to another moving table through the key column on both
//           sides (the parent row has the same key, so it moves in the same batch, parents
//           first); and no user trigger on them would be skipped;
//   purge - on every source no table outside the moving set references the moving tables
//           (children are deleted first, so the parents' RI checks would find nothing), and
//           no user trigger on them would be skipped;
//   both  - the role may set session_replication_role (superuser or granted).
// Otherwise, or when asked (SHARDCTL_CHECKED_LOAD), the checked path: plain COPY and DELETE.
// shardctl's own guard triggers are ENABLE ALWAYS: they fire on both paths.
#pragma once

#include <string>
#include <vector>

#include "migrate/operation.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::migrate {

struct LoadPath {
  bool skip_load_checks = false;
  bool skip_purge_checks = false;
  std::string why;  // one line for -v and --dry-run
};

LoadPath choose_load_path(shardio::RawConn& target, const std::vector<shardio::RawConn*>& sources,
                          const std::vector<PlannedTable>& tables, const std::vector<std::string>& references,
                          bool checked_requested);

// --verify-fk: rows of the moving tables in `range` on the target whose foreign key finds no
// parent there (one line per violated constraint); empty when none.
std::vector<std::string> orphans_in_range(shardio::RawConn& target, const shardio::RouteSpace& space,
                                          const std::vector<PlannedTable>& tables, const routing::KeyRange& range);

}  // namespace shardctl::migrate
