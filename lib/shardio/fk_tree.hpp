// The rows that reference a set of rows through foreign keys, to any depth, discovered from
// pg_catalog: what has to go with rows that leave a table (check's cascade; archive's too).
#pragma once

#include <string>
#include <vector>

#include "shardio/raw_conn.hpp"

namespace shardctl::shardio {

// One table of the tree. The root's `predicate` selects the rows that leave; each child's
// selects its rows that reference rows its parent's predicate selects, so a statement on any
// node needs no other input than the root's (and its parameters).
struct FkNode {
  std::string schema, table;  // raw names
  std::string quoted;
  std::string alias;      // t0 for the root, tN at depth N
  std::string predicate;  // over `alias`
  // The foreign key to the parent node (raw column names, in key order); empty at the root.
  std::vector<std::string> child_columns, parent_columns;
  std::vector<FkNode> children;
};

// Fills in the children of `root` (schema, table, quoted, alias and predicate set) from the
// foreign keys that reference it, recursively. A table already on the path from the root is
// not entered again (a cycle: its rows are already taken); deeper than 16 tables is a usage
// error.
void add_referencing_tables(RawConn& conn, FkNode& root);

// A foreign key between two tables of a set (possibly one table referencing itself).
struct ForeignKey {
  std::string name;            // the constraint's name
  std::string child, parent;   // quoted, as the set names them
  std::vector<std::string> child_columns, parent_columns;  // raw names, in key order
};

// Every foreign key whose referencing and referenced tables are both in `quoted_tables`
// (a partitioned table's constraint once, not its clones on the partitions; one defined on a
// partition alone counts as its partitioned table's). The tree above
// leaves out a table's references to itself and back up its path; a caller that deletes rows
// along the tree checks these.
std::vector<ForeignKey> foreign_keys_among(RawConn& conn, const std::vector<std::string>& quoted_tables);

// The foreign keys among the tables of the tree under `root` that the tree does not follow:
// a table referencing itself, or a table on the path below it (a cycle); child and parent are
// display names (public.tasks). Rows taken along the
// tree may be referenced through these by rows that are not taken: a caller that deletes along
// the tree refuses them.
std::vector<ForeignKey> unfollowed_foreign_keys(RawConn& conn, const FkNode& root);

// "foreign key "fk" of public.t references itself" / "... references public.p, which the
// cascade reaches through it": for a refusal.
std::string describe_unfollowed(const ForeignKey& fk);

}  // namespace shardctl::shardio
