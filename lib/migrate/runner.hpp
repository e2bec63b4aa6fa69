// The per-batch protocol of a journaled operation (split, merge or move): offline -> guard ->
// copy -> verify -> flip -> purge -> journal, batch after batch (flipped batches purge in groups,
// each on a second thread beside the next batch's copy, verify and flip), and the end of the
// operation (coalesce mappings, lift guards). Internal to lib/migrate; Engine::run builds the
// Context. The verify step lives in verify.cpp, the purge step in purge.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/key_sql.hpp"
#include "migrate/batch_step.hpp"
#include "migrate/cut_over_verify.hpp"
#include "migrate/guard.hpp"
#include "migrate/load_path.hpp"
#include "migrate/online.hpp"
#include "migrate/operation.hpp"
#include "migrate/server_digest.hpp"
#include "fault/fault.hpp"
#include "shardio/copy_digest.hpp"
#include "shardio/read_pool.hpp"

namespace shardctl::migrate {

// The operation, rebuilt from the catalog on every run so resume needs nothing else.
struct RunContext {
  std::string op_id;
  std::int64_t token = 0;  // fencing token this process holds
  catalog::Map map;
  shardio::RouteSpace space;
  std::map<std::int64_t, catalog::Shard> shards;  // every shard, by id (batches name their source)
  catalog::Shard target;
  routing::KeyRange range;  // the operation's claim on the map
  std::vector<PlannedTable> tables;
  std::vector<std::string> references;
  std::vector<std::string> references_to_sync;  // synced from the first batch's source before it (plan.cpp)
  std::string column, ctor;  // the mappings range column of this map and its constructor
  std::optional<std::string> fence_grace;  // how long a fence refuses writes (interval); none = until lifted
  int guard_wait_seconds = 60;  // how long to wait for transactions older than a batch's guard
  LoadPath path;                // FK triggers skipped on load and purge, or not
  int parallel = 1;             // connections the verify reads the target back over (--parallel)
  std::optional<OnlineSettings> online;  // --online: each batch streams, then cuts over (online.hpp)
};

class Runner {
 public:
  Runner(pg::Connection& catalog, RunContext ctx, std::function<void(const Progress&)> progress);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs the remaining batches, then finishes the operation (done, or cancelled when asked).
  void run();

 private:
  struct Batch {
    int no;
    routing::KeyRange range;  // half-open; a list point as [k, successor)
    BatchStep step;
    std::int64_t source_id;
    std::string verified;  // per-table "count:checksum" (JSON) journaled by the flip
    // The map's version its flip committed (op_batches.flip_version), which its purge raises the
    // source's route floor to; for a batch flipped before catalog 12 journaled it, the map's
    // version when this run began (no lower than its flip's). None: not flipped yet.
    std::optional<std::int64_t> flip_version;
  };
  // Bound parameters of a batch in the catalog's mappings column: a list map's point is
  // stored [k,k]; everything else [low, high).
  using CatalogRange = catalog::RangeParams;

  bool points() const noexcept { return ctx_.map.kind == routing::MapKind::list; }
  // The context of the batch's fault points (fault/fault.hpp): "b" and its number, the same
  // in every run of the operation.
  static std::string context(const Batch& b) {
    std::string c = "b";  // (appended: GCC 12 warns, wrongly, about "b" + std::to_string)
    return c.append(std::to_string(b.no));
  }
  CatalogRange catalog_range(const routing::KeyRange& r) const;
  const catalog::Shard& shard(std::int64_t id) const;
  shardio::RawConn& source(const Batch& b);
  // A second connection to the batch's source, which purges a batch beside the next one's copy.
  shardio::RawConn& purger(const Batch& b);
  void fence(pqxx::work& tx);
  void journal(const Batch& b, BatchStep step, std::int64_t rows = -1);
  std::vector<Batch> batches();
  bool cancel_requested();
  void open_target();
  // A batch flipped and not yet purged, with what its flip journaled and the bytes its copy
  // streamed (0 when an earlier run copied it).
  struct Flipped {
    Batch batch;
    std::string verified;
    std::int64_t rows = 0;
    std::uint64_t bytes = 0;
  };
  // Flipped batches purged together, in one source transaction (purge.cpp): batches of one
  // source, each holding the keys right after the one before it, every table of each with a
  // server digest. On a heap whose rows arrived over time, every batch's rows lie on nearly
  // every page: one DELETE over the group's keys reads and writes each page once, where one per
  // batch did it once per batch (bench/README.md, "moves on a scattered heap").
  using PurgeGroup = std::vector<Flipped>;
  // A group purges at most this many batches, of at most this many bytes copied: a bounded
  // transaction, and the operation's progress (batches done) moves on while it runs.
  static constexpr std::size_t purge_group_batches = 8;
  static constexpr std::uint64_t purge_group_bytes = std::uint64_t{512} << 20;
  bool advance(const Batch& b, bool cancel, PurgeGroup& pending);
  bool stops_for_cancel(ResumeFrom from, bool cancel);
  Flipped copy_verify_flip(const Batch& b, PurgeGroup& pending);
  void purge_pending(PurgeGroup& pending);
  // Whether batch `b` may join the group's purge once flipped with server digests: the group
  // holds the batch before it on its source and is not full.
  bool room_for(const PurgeGroup& group, const Batch& b) const;
  // Whether every table of the flipped batch has a server digest (server_digest.hpp).
  bool server_digested(const Flipped& f) const;
  // Adds a flipped batch to the pending group, purging the group first where it cannot join.
  void add_pending(PurgeGroup& pending, Flipped f);
  void take_offline(const Batch& b);
  void guard_source(const Batch& b);
  void cut_mapping(pqxx::work& tx, const Batch& b, const CatalogRange& c, catalog::MappingStatus status);
  // What a cut-over that flipped its batch verified, and the flip's map version.
  struct CutOver {
    std::string verified;
    std::int64_t flip_version = 0;
  };
  // The online protocol (runner_online.cpp, online.hpp).
  bool advance_online(const Batch& b, bool cancel, PurgeGroup& pending);
  std::string stream_name(const Batch& b) const;
  std::int64_t start_stream(const Batch& b);
  std::optional<CutOver> cut_over(const Batch& b);
  bool catch_up(const Batch& b);
  void require_slot(const Batch& b);
  // The batch compared ahead of its window where needed (false: the target was behind), then,
  // when `may_defer`, whether a cut-over now would fit: false (the runner waits for a better
  // moment) when the lag or the keys to compare again predict a window longer than
  // cutover_budget_ms.
  bool ready_to_cut_over(const Batch& b, CutOverVerify& verify, bool may_defer);
  std::optional<CutOver> try_cut_over(const Batch& b, std::string& why, CutOverVerify* verify);
  void sync_sequences(const Batch& b);
  void drop_stream(const Batch& b);
  void roll_back_stream(const Batch& b);
  void roll_back_online(const Batch& b);
  std::int64_t timed_copy(const Batch& b);
  std::int64_t copy(const Batch& b);
  void forget_last_load();
  void delete_from_target(const Batch& b);
  bool on_target(const Batch& b);
  std::int64_t rows_on_target(const Batch& b);
  std::int64_t load(shardio::RawConn& src, const Batch& b);
  std::int64_t load_table(shardio::RawConn& src, const PlannedTable& t, const Batch& b);
  // A table's COPY out of the source and into the target.
  struct CopyStatements {
    std::string out, in;
  };
  void pump_reading_back(shardio::RawConn& src, const PlannedTable& t, const Batch& b, const CopyStatements& sql,
                         const std::vector<shardio::ValueKind>& kinds, shardio::CopyDigest& digest);
  std::string verify(const Batch& b);
  // The verify of an online batch's cut-over: both servers digest the batch at once
  // (verify_cut_over.cpp); verify() where their text or numerics hash differently.
  std::string verify_at_cut_over(const Batch& b);
  // The two-part verify of an online batch (cut_over_verify.hpp); none where the servers do not
  // digest alike (the window then verifies the whole batch).
  std::unique_ptr<CutOverVerify> cut_over_verify(const Batch& b);
  [[noreturn]] void verification_failed(const Batch& b, const PlannedTable& t, const std::string& on_source,
                                        const std::string& on_target, const std::string& hint) const;
  bool servers_digest_alike(const Batch& b);
  // Returns the map's version after the flip (journaled as the batch's flip_version).
  std::int64_t flip(const Batch& b, const std::string& verified, bool cut = false);
  // The target's fences on a flipped batch's keys lifted (it holds them again).
  void lift_target_fences(const Batch& b);
  void purge(const PurgeGroup& group);
  // A group's purge up to its COMMIT: the batches it purged (none: an earlier run purged them
  // all, nothing to commit) and, when it was split over two sessions (purge.cpp), the second,
  // whose transaction holds the parents' DELETEs and the fences and commits after the first's.
  // It holds the source's route floor lock of the map (shardside::lock_route_floor) until
  // purge_commit, or the caller's unlock_floor on an error.
  struct OpenPurge {
    std::vector<const Flipped*> batches;
    shardio::RawConn* parents = nullptr;
  };
  // In the purge's fencing transaction on `conn`: the source's route floor for the map raised to
  // the highest flip version of the batches.
  void raise_floor(shardio::RawConn& conn, const std::vector<const Flipped*>& batches) const;
  void unlock_floor(shardio::RawConn& src) const;
  // `second`: a second session to the source, which takes the digests beside the DELETEs and,
  // where the purge splits, deletes the parents' rows.
  OpenPurge purge_rows(shardio::RawConn& src, const PurgeGroup& group, shardio::RawConn* second) const;
  OpenPurge purge_locked(shardio::RawConn& src, const std::vector<const Flipped*>& todo, shardio::RawConn* second) const;
  struct PurgeCheck;  // purge.cpp
  using PurgeRun = std::vector<std::pair<const Flipped*, nlohmann::json>>;  // adjacent batches, their journals
  // One table's rows of a run of batches, as the purge deletes them.
  struct PurgeStep {
    const PlannedTable* table;
    const PurgeRun* run;
    routing::KeyRange keys;
    std::string where;
  };
  // Where the purge splits: the first step the second session deletes, or steps.size().
  std::size_t split_at(shardio::RawConn& src, const std::vector<PurgeStep>& steps) const;
  void delete_beside_digests(shardio::RawConn& src, shardio::RawConn& second, const std::vector<PurgeStep>& steps,
                             std::size_t split, const std::vector<const Flipped*>& todo) const;
  std::int64_t delete_rows(shardio::RawConn& src, const PurgeStep& step) const;
  void check_deleted(shardio::RawConn& src, const PurgeStep& step, std::int64_t deleted, std::optional<std::int64_t> digested) const;
  std::optional<std::int64_t> digest_run(shardio::RawConn& src, const PlannedTable& t, const PurgeRun& run,
                                         const std::string& where) const;
  std::int64_t digest_to_purge(shardio::RawConn& src, const PlannedTable& t, const routing::KeyRange& keys,
                               const std::string& where, const PurgeCheck& check) const;
  [[noreturn]] void refuse_digest(shardio::RawConn& src, const PlannedTable& t, const routing::KeyRange& keys,
                                  const std::string& got, const std::string& want) const;
  [[noreturn]] void refuse_purge(shardio::RawConn& src, const PlannedTable& t, const routing::KeyRange& keys,
                                 const std::string& what, const std::string& why) const;
  void purge_commit(shardio::RawConn& src, const OpenPurge& purged);
  struct PurgeBeside;  // runner.cpp
  void commit_purge_beside(PurgeBeside& p, std::chrono::steady_clock::time_point verify_start,
                           std::chrono::steady_clock::time_point verify_end);
  void done(const Batch& b, std::int64_t rows);
  void roll_back(const Batch& b);
  void copy_references(shardio::RawConn& from);
  void sync_references(const Batch& first);
  void coalesce();
  void finish(journal::OperationStatus status, const std::vector<Batch>& all);
  std::vector<GuardedTable> guarded() const;
  std::string filter(shardio::RawConn& conn, const PlannedTable& t, const routing::KeyRange& r) const;
  // COPY (SELECT the table's columns in the range) TO STDOUT, in the table's format.
  std::string select_copy(shardio::RawConn& conn, const PlannedTable& t, const routing::KeyRange& r) const;
  // What a table's rows in a batch digest to: the CopyDigest text of their COPY stream and,
  // where the table's columns allow it, their value digest (shardio/value_digest.hpp).
  struct Digests {
    std::string stream;
    std::string values;  // empty: the table is verified by reading its rows back
  };
  // The value kinds of the table's columns, or empty when its rows are read back to verify.
  std::vector<shardio::ValueKind> value_kinds(const PlannedTable& t, const Batch& b);
  // The table's columns for the value digest, with these kinds.
  static std::vector<shardio::ValueColumn> value_columns(const PlannedTable& t, const std::vector<shardio::ValueKind>& kinds);
  // Whether LoadDigest may read the table's loaded parts by block: a plain table (not
  // partitioned, no inheritance children) on PostgreSQL 14 or later, and no batch of this run
  // found its rows outside the blocks the load appended.
  bool read_by_blocks(const PlannedTable& t);
  bool streams_without_sort(shardio::RawConn& src, const Batch& b, const PlannedTable& t, const std::string& select);
  std::string describe_source_reads() const;
  // The size of the ring of shared buffers a COPY FROM loads through on the target.
  std::uint64_t ring_bytes();
  // Whether text reaches shardctl from the batch's source in the bytes the target stores
  // (its session's client_encoding is the target's server_encoding): the value digest needs it.
  bool same_encoding(const Batch& b);
  // What the batch's source session hashes as shardctl does, asked with same_encoding() (before
  // any purge may run beside on the source's connection): text received in the bytes the source
  // stores, numerics hashed natively as shardctl hashes them (shardio::numeric_probe_sql).
  struct SourceHashing {
    bool text = false, numerics = false;
  };
  // The aggregate with which the batch's source computes, over the rows it holds, the value
  // digest shardctl computed over their stream; none where it may compute another.
  std::optional<ServerDigest> source_digest_like_stream(const Batch& b, const PlannedTable& t);
  Digests stream_digest(shardio::RawConn& conn, const PlannedTable& t, const routing::KeyRange& r,
                        const std::vector<shardio::ValueKind>& kinds) const;
  // Every table's digest of the batch on the target (in ctx_.tables order): the server's value
  // digest where the source's has one, else the rows read back. Up to ctx_.parallel
  // connections work at once, on tables and on parts of a big table's key range.
  std::vector<std::string> target_digests(const Batch& b, const std::vector<Digests>& source);
  struct TargetReads;  // verify.cpp
  TargetReads plan_reads(const Batch& b, const std::vector<Digests>& source);
  void add_table_reads(const Batch& b, std::size_t table, const Digests& source, TargetReads& reads);
  std::string describe_reads(const TargetReads& reads, const std::vector<Digests>& source) const;
  std::vector<shardio::ReadResult> run_reads(const std::vector<shardio::ReadTask>& tasks);
  std::vector<shardio::ReadResult> read_on_loading_session(const std::vector<shardio::ReadTask>& tasks);
  // The batch's range cut into up to `parts` contiguous parts (integer keys only, else whole).
  std::vector<routing::KeyRange> cut(const PlannedTable& t, const routing::KeyRange& r, int parts);
  GuardOwner owner() const;

  pg::Connection& catalog_;
  RunContext ctx_;
  std::function<void(const Progress&)> progress_;
  fault::FaultInjector faults_;
  std::map<std::int64_t, std::unique_ptr<shardio::RawConn>> sources_;
  std::map<std::int64_t, std::unique_ptr<shardio::RawConn>> purgers_;  // by source shard id: purger()
  std::unique_ptr<shardio::RawConn> target_;
  // Connections to the target that read batches for verify with --parallel N > 1 (declared
  // after target_: closed first); with one reader, target_ reads them.
  std::unique_ptr<shardio::ReadPool> readers_;
  Progress stats_;
  // Per table, the digest of the source stream the last copy() loaded (batch streamed_batch_):
  // verify compares it with the target's rows instead of reading the source again.
  std::map<std::string, Digests> streamed_;
  // Per table, the target's value digest of that batch, read back in the load transaction
  // (load_digest.hpp): verify compares it instead of reading the target again.
  std::map<std::string, std::string> loaded_;
  std::map<std::string, bool> read_by_blocks_;  // by table: LoadDigest may read it by block
  // By source shard id and table: whether the batch's read streams with sorts off (index_use.hpp).
  std::map<std::pair<std::int64_t, std::string>, bool> streams_without_sort_;
  std::optional<std::uint64_t> ring_bytes_;     // the target's COPY buffer ring
  double read_in_load_seconds_ = 0;             // reads back during the last copy(): verify time
  struct {
    int by_block = 0, by_range = 0;
  } read_in_load_;  // how the last copy() read its tables back
  std::map<std::int64_t, bool> same_encoding_;  // by source shard id
  std::map<std::int64_t, SourceHashing> source_hashing_;  // by source shard id, with same_encoding_
  std::optional<bool> numeric_native_;          // the target hashes numerics as the client does
  std::map<std::int64_t, bool> servers_alike_;  // by source shard id: the same server_encoding as the target
  std::map<std::int64_t, bool> numerics_alike_; // by source shard id: the same numeric probe as the target
  int streamed_batch_ = -1;
};

}  // namespace shardctl::migrate
