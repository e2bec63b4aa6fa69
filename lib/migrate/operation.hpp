// Migration operations: planning a split, journaling it in the catalog, and running or
// resuming it batch by batch (README, "Moving data"; shardctl-split(1)).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/catalog.hpp"
#include "core/error.hpp"
#include "journal/journal.hpp"
#include "migrate/online.hpp"
#include "shardio/key_filter.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/value_digest.hpp"

namespace shardctl::migrate {

// How split, merge, move and the steps of `rebalance apply` cut a range into batches, one rule
// for all four: --batch-size N gives N distinct keys per batch; without it, batches of about
// this many bytes of rows (heap and indexes, from the source's statistics), so a batch's
// offline window is predictable whatever the rows per key. The config's [defaults] batch_size
// is not read here (it sizes archive batches).
inline constexpr std::int64_t default_batch_bytes = 64'000'000;

// Sets a request's batch_size and batch_bytes from --batch-size (none: default_batch_bytes).
inline void batch_sizing(const std::optional<int>& keys, int& batch_size, std::int64_t& batch_bytes) {
  if (keys) {
    batch_size = *keys;
    batch_bytes = 0;
  } else {
    batch_bytes = default_batch_bytes;
  }
}

struct SplitRequest {
  std::string map;
  std::string at;
  std::string to;
  bool move_upper = true;
  int batch_size = 1000;
  std::int64_t batch_bytes = 0;  // > 0: batches of about this many bytes (from the stats), batch_size ignored
};

// Moves every mapping (or part of one) inside a range onto one shard.
struct MergeRequest {
  std::string map;
  std::string range;  // LOW..HIGH, half-open, in the map's bound type
  std::string into;
  int batch_size = 1000;
  std::int64_t batch_bytes = 0;  // > 0: batches of about this many bytes (from the stats), batch_size ignored
};

// Moves the mapping that routes one key: a list map's point, or the whole range of a range or
// hash map that holds the key.
struct MoveRequest {
  std::string map;
  std::string key;  // a key of the map's key type (for hash maps: the key, not its hash)
  std::string to;
  int batch_size = 1000;
  std::int64_t batch_bytes = 0;  // > 0: batches of about this many bytes (from the stats), batch_size ignored
};

struct PlannedTable {
  std::string name;    // as in the catalog (schema.table)
  std::string quoted;  // "schema"."table"
  std::string key_column;
  bool key_own_collation = false;  // see shardio::KeyColumn: text keys compared and hashed without COLLATE "C"
  std::vector<std::string> columns;  // raw names, copied by name
  std::vector<std::string> order_by;  // primary key, for index-ordered reads
  bool binary = true;  // copied as binary COPY (see shardio::binary_copy_is_portable), else text
  std::vector<std::string> types{};  // format_type() of each column, for the value digest
  std::vector<bool> not_null{};      // each column's NOT NULL on the source, for the value digest
};

// How a sharded table is copied: its columns and primary key as the source has them.
PlannedTable describe_table(shardio::RawConn& source, const catalog::TableDef& table, routing::MapKind kind);
// The value kind of each of the table's columns when every one has a value digest
// (shardio/value_digest.hpp), else empty: its batches are then verified by reading rows back.
std::vector<shardio::ValueKind> value_kinds_of(const PlannedTable& table);
// How batches of these tables are verified, for -v and --dry-run: "value digest of a, b; rows
// read back of c" (a value digest also needs the sessions' text in the target's encoding).
std::string verify_method(const std::vector<PlannedTable>& tables);
// Sorts tables parents first, by the foreign keys the source has among them.
void sort_by_foreign_keys(shardio::RawConn& source, std::vector<PlannedTable>& tables);
// Sorts quoted reference tables parents first, by the foreign keys the source has among them
// (nation REFERENCES region: region is copied first).
void sort_references_by_foreign_keys(shardio::RawConn& source, std::vector<std::string>& quoted_refs);

// One source's share of an operation: the part of one mapping that moves to the target.
struct Segment {
  catalog::Shard source;
  catalog::Mapping mapping;  // the mapping the range is cut from (all of it for move/merge)
  routing::KeyRange range;   // the keys that move (a list point as [k, successor))
};

struct PlannedBatch {
  std::size_t segment;  // index into Plan::segments
  routing::KeyRange range;
  std::int64_t keys = 0;  // distinct keys in the batch when planned
};

struct Plan {
  journal::OperationKind kind = journal::OperationKind::split;  // split, merge or move
  catalog::Map map;
  shardio::RouteSpace space;
  catalog::Shard target;
  routing::KeyRange range;             // the span the operation covers (its claim on the map)
  std::optional<routing::Key> point;   // a list map's point (move only)
  std::vector<Segment> segments;       // ordered by key
  std::vector<PlannedBatch> batches;   // ordered by key
  std::vector<PlannedTable> tables;      // sharded tables, parents first
  std::vector<std::string> references;   // reference tables (quoted) copied when empty on the target
  // Reference tables (quoted) whose filled copy on the target differs from the source's, which
  // --sync-references syncs before the first batch (journaled in args; without it, refused).
  std::vector<std::string> references_to_sync;
  std::vector<std::string> warnings;
  std::uint64_t estimated_bytes = 0;     // heap+index bytes the moving rows take on the sources
  std::int64_t keys_total = 0;           // distinct keys that move
  std::int64_t rows_total = 0;           // rows that move, all tables
  std::optional<std::uint64_t> target_free_bytes;  // free space where the target keeps its data, if readable
  std::string load_path;                 // which load path a run would take now, and why
  int batch_size = 1000;
  std::int64_t batch_bytes = 0;          // > 0: batch_size is derived per segment from the bytes per key
  nlohmann::json args;                   // the request, journaled with the operation
  std::optional<OnlineSettings> online;  // --online (online.hpp), journaled in args
};

struct Progress {
  int batch = 0;
  int batches = 0;
  std::int64_t rows = 0;
  std::uint64_t bytes = 0;
  // Seconds spent per phase, for `-v` and the benchmark.
  double copy_seconds = 0, verify_seconds = 0, purge_seconds = 0, catalog_seconds = 0;
  // Of verify_seconds, the time the verify ran beside a purge (runner.hpp, PurgeGroup; the two add
  // only once to the run's wall time).
  double verify_beside_seconds = 0;
  // Online cut-overs: done, given up (writers let go on, tried again), deferred (not started:
  // predicted too long), and the longest that held writers, in ms.
  int cutovers = 0, cutovers_given_up = 0, cutovers_deferred = 0;
  double longest_cutover_ms = 0;
  std::string last_give_up;  // why the last cut-over given up gave up
  std::string path;  // which load path runs, and why (see load_path.hpp)
  std::string verify;  // how the last batch was verified: which tables by value digest, which read back
  std::string read;    // how the source read the tables' batches: streamed through an index, or sorted (index_use.hpp)
};

// What the configuration decides about running operations.
struct EngineOptions {
  std::optional<std::string> fence_grace;  // [defaults] fence_grace as a PostgreSQL interval; none = until lifted
  int guard_wait_seconds = 60;             // wait for transactions older than a batch's guard
  bool checked_load = false;               // never skip FK triggers (SHARDCTL_CHECKED_LOAD)
  bool verify_fk = false;                  // --verify-fk: anti-join the moved range on the target when done
  int parallel = 1;                        // --parallel: connections each batch is read back over to verify
  bool sync_references = false;            // --sync-references: sync differing reference copies on the target first
};

// One source shard's fences of an operation, as `op unfence` reports them.
struct Unfenced {
  std::string shard;
  int ranges = 0;
};

class Engine {
 public:
  explicit Engine(pg::Connection& catalog, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Each checks every precondition (all problems reported together, usage Error) and plans the
  // batches from the real key distribution on the sources. They change nothing.
  Plan plan_split(const SplitRequest& request);
  Plan plan_merge(const MergeRequest& request);
  Plan plan_move(const MoveRequest& request);
  // Journals the plan as a new operation; exit 75 when an unfinished operation overlaps or a
  // mapping changed since planning. Returns the operation id.
  // With `preview` (--dry-run), runs every check of the start (the map lock, overlapping
  // operations, mappings that changed since planning) and returns "" without journaling.
  std::string start(const Plan& plan, bool preview = false);
  // For --online: every source and the target meet what logical replication needs (server
  // settings, privileges, replica identities); a usage Error (64) naming the first that does
  // not, and how many more, before anything is created (engine_online.cpp).
  void check_online(const Plan& plan);
  // `op resume ID --max-lag/--cutover-timeout`: journals new settings for an online operation
  // (its next runs use them); a usage Error for an operation that is not online.
  void retune_online(const std::string& op_id, std::optional<double> max_lag_seconds, std::optional<int> cutover_timeout_ms);
  // What `op resume --dry-run` checks: the operation exists and no live process runs it (75,
  // as run() would refuse). Returns its status.
  journal::OpStatus preview_run(const std::string& op_id);
  // Runs (or resumes) the operation to its end, its cancellation, or an error (journaled as
  // failed, then rethrown). Exit 75 when another live process runs it.
  journal::OpStatus run(const std::string& op_id, const std::function<void(const Progress&)>& progress = {});

  // Asks the operation's runner to stop after its current batch. Usage error (64, nothing
  // changed) for an online operation whose every batch has flipped: the application already
  // writes to the target, and a cancel cannot take that back (op(1), "op cancel").
  void request_cancel(const std::string& op_id);
  // That refusal alone, for `op cancel --dry-run` (engine_online.cpp).
  void check_cancellable(const std::string& op_id);
  journal::OpStatus status(const std::string& op_id);
  std::vector<journal::OpStatus> list();
  // Lifts the fences a finished operation left on its source shards (`dry_run`: only counts
  // them). Exit 75 while the operation is unfinished.
  std::vector<Unfenced> unfence(const std::string& op_id, bool dry_run);

 private:
  // The checks and batch planning every kind shares, once its segments are known.
  void finish_plan(Plan& plan);
  // Takes the map's data lock shared for this process (see catalog/locks.hpp), once per map;
  // exit 75 while `check --fix` holds it.
  void hold_map_lock(std::int64_t map_id, const std::string& map_name);

  pg::Connection& catalog_;
  EngineOptions options_;
  std::vector<std::int64_t> locked_maps_;
};

}  // namespace shardctl::migrate
