// shardctl's logical replication objects on shards, the layer under online moves
// (`split/merge/move --online`): PostgreSQL 15 carries the changes of a moving key range from
// the source shard to the target while the initial copy reads under the slot's snapshot.
//
// One online stream of an operation (a batch, or any part it numbers) has three objects, all
// named from the operation id and that number (names.hpp: shardctl_op_<32 hex>_<n>):
//   - a publication on the source: the moving tables, each with the caller's row filter (the
//     key predicate shardio/key_filter writes), publishing insert, update and delete, never
//     truncate (an unfiltered TRUNCATE would empty the target's other ranges), through the
//     partition root (a partitioned table's own row filter applies only that way);
//   - a logical slot on the source, created on a replication connection that exports its
//     snapshot (ExportedSlot): a copy that reads under that snapshot, then the changes from the
//     slot, miss nothing and repeat nothing. Exporting a snapshot first and creating the slot
//     afterwards loses the changes between the two;
//   - a subscription on the target that uses the slot (no slot of its own, no copy of its own),
//     created disabled and enabled once the copy is in.
// Every create keeps an object that already exists, every drop is idempotent (an absent object
// is nothing to do), and the subscription drops without reaching the source (disable, detach
// its slot, drop), so a cancel or a resume after a crash at any step can run them again. The
// engine journals each object before it creates it; list_replication_objects() finds what no
// live operation owns.
//
// Progress: flushed_wal_position() on the source gives a position L after every commit so far
// (the engine reads it once its fence holds), wait_applied() polls the target every few
// milliseconds until the subscription has applied everything up to L, replication_lag() says
// how far behind it is in bytes and seconds. check_source() and check_target() report every
// precondition not met (server settings, privileges, replica identities), one message each,
// for the caller to refuse with (exit 64) before anything is created.
//
// What this layer does not do: choose batches, fence writers, verify, flip the map, journal;
// that is the migration engine's protocol (lib/migrate), built on these calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/words.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::shardside {

// ---- Names (pure) ----

// The name of an operation's replication objects for one stream: shardctl_op_<hex>_<n>.
// `op_id` is the operation's UUID in any case, with or without hyphens; anything else (or a
// negative number) is an internal error: operation ids come from the journal, never typed.
std::string replication_name(std::string_view op_id, int batch_no);

struct ReplicationName {
  std::string op_id;  // canonical UUID text: 8-4-4-4-12 lowercase hex digits
  int batch_no = 0;
};

// The operation and number a shardctl replication name was made from; none for any other name
// (another tool's publication or slot, a user's), which shardctl must leave alone.
std::optional<ReplicationName> parse_replication_name(std::string_view name);

// A WAL position ("16/B374D848" as the server writes a pg_lsn) and back; none for text that is
// not one.
std::optional<std::uint64_t> parse_lsn(std::string_view text);
std::string format_lsn(std::uint64_t lsn);

// ---- Publication (on the source) ----

struct PublishedTable {
  std::string quoted;      // "schema"."table", quoted by the caller
  std::string row_filter;  // a boolean SQL expression over the table's key columns, without WHERE
};

// Creates the publication unless one of that name exists (then it is kept as it is: the name
// says which operation and stream it is for). Row filters may use only the table's columns,
// constants and built-in immutable functions (the server refuses anything else), and only
// columns its replica identity covers, or UPDATE and DELETE on the table fail while the
// publication exists: check_source() says so before. Returns whether it created it.
bool create_publication(shardio::RawConn& source, const std::string& name, const std::vector<PublishedTable>& tables);
// DROP PUBLICATION IF EXISTS. Returns whether there was one.
bool drop_publication(shardio::RawConn& source, const std::string& name);

// ---- Slot with exported snapshot (on the source) ----

// A logical replication slot (output plugin pgoutput), created on a replication connection
// (replication=database, the simple query protocol) that exports a snapshot of the moment the
// slot starts: every change committed after that snapshot is in the slot. The snapshot lives
// as long as this object holds its connection open and idle; another session imports it with
// begin_snapshot_transaction() (several may, e.g. a read pool). close() or the destructor
// ends the snapshot; the slot stays until drop_slot().
//
// Creating the slot waits for every transaction that holds a transaction id on the source's
// server (all its databases) to end. After `wait` it gives up: a locked error (75) naming the
// oldest such sessions, and no slot is left (the server drops a slot whose creation failed).
class ExportedSlot {
 public:
  ExportedSlot(const std::string& source_dsn, const std::string& source_role, const std::string& name,
               std::chrono::milliseconds wait = std::chrono::seconds(30));
  ~ExportedSlot() = default;
  ExportedSlot(const ExportedSlot&) = delete;
  ExportedSlot& operator=(const ExportedSlot&) = delete;

  const std::string& slot_name() const noexcept { return slot_name_; }
  const std::string& snapshot_name() const noexcept { return snapshot_name_; }
  // The LSN from which the slot's changes start (changes before it are in the snapshot).
  std::uint64_t consistent_point() const noexcept { return consistent_point_; }
  bool open() const noexcept { return conn_ != nullptr; }
  // Ends the snapshot (closes the replication connection). Sessions that imported it keep it.
  void close() noexcept { conn_.reset(); }

 private:
  std::unique_ptr<shardio::RawConn> conn_;
  std::string slot_name_;
  std::string snapshot_name_;
  std::uint64_t consistent_point_ = 0;
};

// BEGIN ISOLATION LEVEL REPEATABLE READ; SET TRANSACTION SNAPSHOT '<snapshot>' on `conn`, a
// session on the slot's database (a snapshot is not imported into another one) outside any
// transaction. The caller commits or rolls back.
void begin_snapshot_transaction(shardio::RawConn& conn, const std::string& snapshot_name);

// Drops the slot unless it does not exist (then returns false). A slot in use (a
// subscription's sender streams from it, or an ExportedSlot still holds it) is waited for up
// to `wait_inactive`, since a sender ends a moment after its subscription is dropped; then a
// locked error (75) naming the process that holds it and its application (the subscription).
bool drop_slot(shardio::RawConn& source, const std::string& name,
               std::chrono::milliseconds wait_inactive = std::chrono::seconds(5));

// What the source's server says of the slot: it streams on, it is gone, or it was invalidated
// (wal_status 'lost': max_slot_wal_keep_size let the server remove WAL the slot still needed;
// no subscription can stream from it again).
enum class SlotHealth { usable, missing, lost };
SlotHealth slot_health(shardio::RawConn& source, const std::string& name);

// ---- Subscription (on the target) ----

struct SubscriptionSpec {
  std::string name;
  std::string source_dsn;  // how the TARGET's server reaches the source (it connects from there)
  std::string publication;
  std::string slot;
  // Disable the subscription on the first apply error instead of retrying every 5 s. A
  // restart of the source counts as an error too, so the caller that sets it must enable the
  // subscription again after one; wait_applied() returns `stopped` for a disabled subscription.
  bool disable_on_error = false;
};

// CREATE SUBSCRIPTION on the existing slot, disabled, copying nothing (create_slot = false,
// copy_data = false, enabled = false), unless one of that name exists in the target's
// database (kept). It cannot run in a transaction block. The target's server connects to the
// source here: an unavailable error (69) when it cannot. Returns whether it created it.
bool create_subscription(shardio::RawConn& target, const SubscriptionSpec& spec);
// ALTER SUBSCRIPTION ... ENABLE: the launcher starts its apply worker. An error when it does
// not exist. PostgreSQL 15's launcher starts workers at most once per wal_retrieve_retry_interval
// (5 s by default) for the whole server (16 tracks it per subscription): a subscription enabled
// a moment after another one started on the same target waits up to that long for its worker.
// Many short streams in a row pay it each time; one stream per source and target pays it once.
void enable_subscription(shardio::RawConn& target, const std::string& name);
// Disables, detaches the slot (slot_name = NONE) and drops the subscription, so that it never
// connects to the source: it works when the source is unreachable or the slot already gone,
// and leaves the slot to drop_slot(). Returns whether there was one.
bool drop_subscription(shardio::RawConn& target, const std::string& name);

// ---- Progress ----

// The source's pg_current_wal_insert_lsn(): after the commit record of every transaction it
// made visible (not pg_current_wal_lsn(): an asynchronous commit is visible before its record
// is written).
std::uint64_t inserted_wal_position(shardio::RawConn& source);

// A WAL position on the source after every transaction committed so far, with the WAL up to it
// flushed, so that the sender can stream it at once: a transaction that commits with
// synchronous_commit = off (the writers' choice) waits in memory for the WAL writer (up to
// three wal_writer_delay rounds) before any sender may read it. It commits a transactional
// logical message (pg_logical_emit_message; pgoutput publishes none) with synchronous_commit =
// on, which flushes the WAL before it. Read it once the writers are fenced: L.
std::uint64_t flushed_wal_position(shardio::RawConn& source);

struct SubscriptionProgress {
  bool exists = false;
  bool enabled = false;
  std::optional<int> worker_pid;          // the apply worker; none while it is not running
  std::optional<std::uint64_t> received;  // last position received (not yet necessarily applied)
  std::optional<std::uint64_t> applied;   // everything committed up to here is applied (see .cpp)
  std::int64_t apply_errors = 0;          // pg_stat_subscription_stats.apply_error_count
};

SubscriptionProgress subscription_progress(shardio::RawConn& target, const std::string& name);

enum class WaitOutcome {
  applied,    // the subscription applied everything up to the position
  timed_out,  // it did not within the time given (see `last` for why: no worker, errors, lag)
  stopped,    // the subscription is gone or disabled: waiting longer changes nothing
};
inline constexpr auto wait_outcome_words = words<WaitOutcome>({
    {WaitOutcome::applied, "applied"},
    {WaitOutcome::timed_out, "timed_out"},
    {WaitOutcome::stopped, "stopped"},
}).otherwise("unknown");
constexpr const auto& words_of(WaitOutcome) noexcept { return wait_outcome_words; }

struct WaitResult {
  WaitOutcome outcome = WaitOutcome::timed_out;
  SubscriptionProgress last;
  std::chrono::milliseconds waited{0};
};

// Polls the target every `poll` until the subscription has applied everything committed on
// the source up to `position` (applied >= position), it stops, or `timeout` passes.
WaitResult wait_applied(shardio::RawConn& target, const std::string& name, std::uint64_t position,
                        std::chrono::milliseconds timeout,
                        std::chrono::milliseconds poll = std::chrono::milliseconds(5));

struct Lag {
  // The source's current WAL position minus the subscription's applied one (0 when it is
  // ahead; the whole position when nothing is applied yet).
  std::uint64_t bytes = 0;
  // The sender's replay_lag (pg_stat_replication, sampled by the server about once a second):
  // the time between a commit on the source and its apply on the target. None when the slot
  // has no sender, or after a while with nothing to replicate (caught up).
  std::optional<double> seconds;
};

Lag replication_lag(shardio::RawConn& source, const std::string& slot, shardio::RawConn& target,
                    const std::string& subscription);

// ---- Listing ----

// stream_watch: a target's record of the keys a stream changes (lib/shardside/stream_keys.hpp),
// which its table triggers keep filling for as long as the watch is there.
enum class ReplicationObjectKind { publication, slot, subscription, stream_watch };
inline constexpr auto replication_object_kind_words = words<ReplicationObjectKind>({
    {ReplicationObjectKind::publication, "publication"},
    {ReplicationObjectKind::slot, "slot"},
    {ReplicationObjectKind::subscription, "subscription"},
    {ReplicationObjectKind::stream_watch, "stream_watch"},
}).otherwise("unknown");
constexpr const auto& words_of(ReplicationObjectKind) noexcept { return replication_object_kind_words; }

struct ReplicationObject {
  ReplicationObjectKind kind = ReplicationObjectKind::publication;
  std::string name;
  ReplicationName owner;          // the operation and stream the name says
  std::optional<int> active_pid;  // slot: the process streaming from it
  std::string wal_status;         // slot: reserved, extended, unreserved or lost (pg_replication_slots)
  bool enabled = false;           // subscription
};

// Every shardctl-named publication, logical slot, subscription and stream watch of the
// connection's database, by kind then name. Objects named otherwise are not shardctl's and are left out.
std::vector<ReplicationObject> list_replication_objects(shardio::RawConn& db);

// ---- Preconditions ----

enum class Requirement {
  server_version,       // the source is PostgreSQL 15 or later (row filters)
  wal_level,            // the source has wal_level = logical
  replication_slots,    // the source has free replication slots
  wal_senders,          // the source has free WAL senders
  slot_wal_keep_size,   // the source bounds the WAL a slot keeps (max_slot_wal_keep_size)
  replication_role,     // the source's role may create slots (superuser or REPLICATION)
  replica_identity,     // each moving table's replica identity covers its key columns
  subscription_role,    // the target's role may create subscriptions (superuser on 15)
  replication_origins,  // the target has a free replication origin (max_replication_slots)
  replication_workers,  // the target has a free apply worker (max_logical_replication_workers)
};
inline constexpr auto requirement_words = words<Requirement>({
    {Requirement::server_version, "server_version"},
    {Requirement::wal_level, "wal_level"},
    {Requirement::replication_slots, "replication_slots"},
    {Requirement::wal_senders, "wal_senders"},
    {Requirement::slot_wal_keep_size, "slot_wal_keep_size"},
    {Requirement::replication_role, "replication_role"},
    {Requirement::replica_identity, "replica_identity"},
    {Requirement::subscription_role, "subscription_role"},
    {Requirement::replication_origins, "replication_origins"},
    {Requirement::replication_workers, "replication_workers"},
}).otherwise("unknown");
constexpr const auto& words_of(Requirement) noexcept { return requirement_words; }
using shardctl::operator<<;
using shardctl::to_text;

struct Unmet {
  Requirement requirement;
  std::string message;  // one line: what, where, why it matters
  std::string hint;     // what to change
};

struct PreconditionReport {
  std::vector<Unmet> unmet;
  bool ok() const noexcept { return unmet.empty(); }
  bool has(Requirement r) const noexcept;
  // A usage error (64) with the first unmet requirement's message and hint (and how many more
  // there are); nothing when all are met.
  void require() const;
};

struct MovingTable {
  std::string quoted;                    // "schema"."table"
  std::vector<std::string> key_columns;  // raw column names the row filter reads
};

// The source's settings, role and tables for `streams` online streams at once (each needs a
// slot and, while it runs, a WAL sender; the slot's exported snapshot briefly a second one).
PreconditionReport check_source(shardio::RawConn& source, const std::vector<MovingTable>& tables, int streams = 1);
// The target's role and free origins and workers for `streams` subscriptions at once.
PreconditionReport check_target(shardio::RawConn& target, int streams = 1);

}  // namespace shardctl::shardside
