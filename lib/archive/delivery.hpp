// Delivering one batch of archived rows to the job's destination, and proving it arrived, before
// the source deletes anything (shardctl-archive(1)). A batch is identified by its shard, number and
// timestamp, which the journal records before the first delivery: delivering the same batch again
// after a crash replaces what the interrupted delivery left, so no row is ever archived twice.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "archive/archive_set.hpp"
#include "archive/destination.hpp"
#include "archive/manifest.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::archive {

// A batch's rows in one table: how many and their order-independent digest
// (digest/row_digest.hpp) as they streamed out of the source, in the columns the destination
// stores (the table's, plus Delivery::extra_columns()).
struct TableStats {
  std::int64_t rows = 0;
  std::string checksum;
  bool operator==(const TableStats&) const = default;
};

struct BatchRef {
  std::string run;          // operation id
  std::string shard;        // source shard name
  int batch_no = 0;
  std::string archived_at;  // ISO 8601 UTC, as journaled
};

class Delivery {
 public:
  virtual ~Delivery() = default;
  // Before anything is deleted: the destination is reachable and can take the set's tables
  // (a postgres: destination creates missing archive tables and checks existing ones).
  // `create` false (--dry-run): only checks, creating nothing.
  virtual void prepare(const ArchiveSet& set, bool create) = 0;
  // Starts delivering a batch, first removing what an earlier attempt left.
  virtual void begin(const BatchRef& batch, const ArchiveSet& set) = 0;
  // The columns the destination stores beyond the table's own, as SQL the source evaluates in
  // the COPY's select list ("" for none).
  virtual std::string extra_columns(const BatchRef& batch, shardio::RawConn& source) const = 0;
  // Streams into table `i` the rows `copy_out_sql` (COPY ... TO STDOUT on `source`, with
  // extra_columns()) yields, parents first; returns the count and digest of what streamed.
  virtual TableStats load(const BatchRef& batch, const ArchiveSet& set, std::size_t i, shardio::RawConn& source,
                          const std::string& copy_out_sql) = 0;
  // Reads table `i`'s rows of the batch back from the destination and checks their count and
  // digest against `expected`, those of the rows the source's (uncommitted) DELETE removed;
  // throws a data Error when they differ.
  virtual void verify(const BatchRef& batch, const ArchiveSet& set, std::size_t i, const TableStats& expected) = 0;
  // Makes the batch durable at the destination.
  virtual void commit(const BatchRef& batch, const ArchiveSet& set) = 0;
  // Drops an unfinished batch (a transaction is rolled back; files not yet recorded stay
  // unreferenced and are replaced by the next attempt).
  virtual void abort() noexcept = 0;
};

// The run directory of a dir: destination: PATH/<run id>.
std::filesystem::path run_directory(const Destination& to, const std::string& run);

// The manifest of a dir: run, shared by the shards that deliver into it at once.
class SharedManifest {
 public:
  SharedManifest(std::filesystem::path run_dir, Manifest initial) : dir_(std::move(run_dir)), m_(std::move(initial)) {}
  // Replaces the entries of (shard, batch) with `files` and rewrites the manifest atomically.
  void record_batch(const std::string& shard, std::int64_t batch, const std::vector<ManifestFile>& files,
                    const std::map<std::string, std::string>& ddl);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::mutex mu_;
  std::filesystem::path dir_;
  Manifest m_;
};

// One per shard worker (connections are not shared between threads).
std::unique_ptr<Delivery> make_delivery(const Destination& to, SharedManifest* manifest);

}  // namespace shardctl::archive
