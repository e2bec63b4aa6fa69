// The tables one archive run takes rows from on a shard, and the SQL that selects a batch's rows
// in each: the root table (the job's table, walked by its primary key) and, with --cascade, every
// table that references it through foreign keys, to any depth, found in pg_catalog. Parents come
// first: the destination is written in this order and the source deleted in reverse.
//
// Without --cascade a root row that is still referenced stays where it is: the batch filter
// leaves it out and the run reports how many were refused, so no child is ever orphaned.
//
// A declared xref whose children live on their parent's shard (xref_children.hpp) counts as a
// foreign key here, for both: its children keep a root row, or go along with --cascade.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "archive/job.hpp"
#include "archive/keyset.hpp"
#include "archive/xref_children.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/shard_schema.hpp"

namespace shardctl::archive {

struct ArchivedTable {
  std::string name;           // display form: public.orders
  std::string schema, table;  // raw
  std::string quoted;
  std::string alias;  // t0 for the root, tN at depth N
  int parent = -1;    // index of the referenced table (parents come first); -1 for the root
  std::vector<std::string> child_columns, parent_columns;  // the foreign key to `parent` (raw)
  std::vector<shardio::Column> columns;                     // what is archived (no generated columns)
  std::vector<std::string> primary_key;                     // raw; may be empty below the root
  bool plain = true;  // an ordinary table (not partitioned): its rows are found again by ctid
  // An index leads with the foreign key to the parent: a batch's rows are found by index probes
  // from the parent's staged keys. (The planner, guessing the stage's size, may otherwise scan
  // the whole child per batch once batches are large.)
  bool fk_indexed = false;
  std::string xref{};  // the declared xref `parent` is reached through; empty for a foreign key

  // "a", "b" quoted, optionally qualified by `qualifier` ("t1." -> t1."a").
  std::string column_list(const std::string& qualifier = "") const;
};

// "c.a = p.x AND c.b = p.y": a foreign key's column pairs as a join condition between the
// referencing rows (alias `child_alias`) and the referenced ones (`parent_alias`); raw names.
std::string fk_join(const std::vector<std::string>& child_columns, const std::vector<std::string>& parent_columns,
                    const std::string& child_alias, const std::string& parent_alias);

struct ArchiveSet {
  std::vector<ArchivedTable> tables;  // [0] is the root; parents before children
  Keyset keyset;                      // the root's primary-key walk
  bool cascade = false;
  // Without --cascade: the foreign keys that keep a root row (the root's direct referencers,
  // the root itself among them when it references itself).
  std::vector<ArchivedTable> referencing;
  // Declared xrefs from a table of the set whose children may be on other shards: a run leaves
  // those children behind, and says so.
  std::vector<std::string> notes;

  // The root rows of the batch (low_row, high_row] (Keyset::literal_row) that the run takes.
  std::string root_filter(const std::string* low_row, const std::string& high_row) const;
  // The root rows of the batch that stay because a row still references them (no --cascade).
  std::string refused_filter(const std::string* low_row, const std::string& high_row) const;
  std::string referenced_by(const ArchivedTable& referencing_table, const std::string& alias) const;
  // For each table, in order, the condition (over its alias) that selects its rows of the batch.
  std::vector<std::string> predicates(const std::string& root_filter) const;
  // A batch in flight locks the rows of the root and of every table an archived table references,
  // parents first, and stages in a temporary table of the source's transaction what finds them
  // again: their ctid and the columns the table's children reference (shardctl_batch_I). While
  // the rows are locked their ctids stay put, and no new row can reference them.
  // The other tables (leaves) are not staged: their DELETE streams their rows to the destination.
  bool staged(std::size_t i) const;
  std::string batch_relation(std::size_t i) const;
  std::string stage_sql(std::size_t i, const std::string& root_filter) const;
  // The rows of table `i` in the batch as the stage selects them: the root's filter, or the rows
  // referencing its parent's staged rows (a small table: the join uses the child's FK index).
  std::string staged_predicate(std::size_t i, const std::string& root_filter) const;
  // The rows of table `i` in the batch, for COPY and DELETE: a staged table's by ctid (a TID scan)
  // when it is an ordinary table; staged_predicate() for a partitioned one (ctids repeat across
  // partitions) and for a leaf.
  std::string rows_of(std::size_t i, const std::string& root_filter) const;
  // "SELECT cols FROM t alias WHERE pred" for table `i`, with `extra` appended to the columns.
  std::string select_sql(std::size_t i, const std::string& predicate, const std::string& extra = "") const;
  // "DELETE FROM t AS alias WHERE pred RETURNING cols": the same columns select_sql() gives, so
  // COPY of either yields the same text for the same rows.
  std::string delete_sql(std::size_t i, const std::string& predicate, const std::string& extra = "") const;

  // The tables, for the journal and the manifest: name, parent, foreign-key columns.
  nlohmann::json describe() const;
};

// Reads the set from the shard's catalog and the declared xrefs, and checks the job's predicate
// there (predicate.hpp: the set's keyset holds the server's rendering). Usage Error (64) when the
// table is missing, has no primary key, the predicate is refused, or (with --cascade) a
// referencing table nests deeper than 16 or is reached along two paths.
ArchiveSet discover_archive_set(shardio::RawConn& shard, const Job& job, const XrefChildren& xrefs);

}  // namespace shardctl::archive
