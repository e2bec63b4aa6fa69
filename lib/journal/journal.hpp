// The operations journal in the catalog (shardctl.operations): one row per operation of any
// kind (split, merge, move, check-*), so `shardctl op list|show|wait|cancel|resume` see them all.
// Here: creating the row, running it with one live process (runner lock, fencing token, lease),
// finishing it, and reading it back. What an operation does step by step (migrate's batches in
// shardctl.op_batches, its FOR UPDATE reads of its own columns) stays with its kind.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "catalog/key_sql.hpp"
#include "core/error.hpp"
#include "core/words.hpp"
#include "pg/connection.hpp"

namespace shardctl::journal {

// What shardctl.operations.status says of an operation, plus `interrupted`: journaled running,
// but no live process holds its runner lock (operation_status() tells). The catalog's words are
// the contract (JSON, `op list`); code compares the enum. Text only here.
enum class OperationStatus { planned, running, interrupted, paused, failed, cancelled, done };
inline constexpr auto operation_status_words = words<OperationStatus>({
    {OperationStatus::planned, "planned"},
    {OperationStatus::running, "running"},
    {OperationStatus::interrupted, "interrupted"},
    {OperationStatus::paused, "paused"},
    {OperationStatus::failed, "failed"},
    {OperationStatus::cancelled, "cancelled"},
    {OperationStatus::done, "done"},
}).stored_as("operation status", "shardctl.operations");
constexpr const auto& words_of(OperationStatus) noexcept { return operation_status_words; }
// Whether the operation is over (done or cancelled): nothing runs or resumes it.
inline bool is_over(OperationStatus s) noexcept { return s == OperationStatus::done || s == OperationStatus::cancelled; }

// What an operation is (shardctl.operations.kind): a migration, an archive run or restore, or
// one of check's journaled fixes.
enum class OperationKind {
  split,
  merge,
  move,
  archive,
  archive_restore,
  check_quarantine,
  check_delete,
  check_rehome,
  check_restore,
};
inline constexpr auto operation_kind_words = words<OperationKind>({
    {OperationKind::split, "split"},
    {OperationKind::merge, "merge"},
    {OperationKind::move, "move"},
    {OperationKind::archive, "archive"},
    {OperationKind::archive_restore, "archive-restore"},
    {OperationKind::check_quarantine, "check-quarantine"},
    {OperationKind::check_delete, "check-delete"},
    {OperationKind::check_rehome, "check-rehome"},
    {OperationKind::check_restore, "check-restore"},
}).stored_as("operation kind", "shardctl.operations");
constexpr const auto& words_of(OperationKind) noexcept { return operation_kind_words; }
using shardctl::operator<<;
using shardctl::to_text;
// split, merge or move: an operation of lib/migrate, with batches.
inline bool is_migration(OperationKind k) noexcept {
  return k == OperationKind::split || k == OperationKind::merge || k == OperationKind::move;
}

// Who holds an operation's lease, as `op show` names it: "host:pid".
std::string holder_name();

// Whether `text` can be an operation id (a UUID); callers refuse anything else as a usage error.
bool is_operation_id(const std::string& text);

// An operation that starts running now, claiming a range of one map's key space (a list point
// as [k,k]) so that no other operation on those keys can start beside it.
struct NewOperation {
  OperationKind kind;
  std::int64_t map_id = 0;
  std::string range_column, range_ctor;  // the map's catalog::range_column() and range_constructor()
  catalog::RangeParams claim;
  nlohmann::json args;                   // the request, as the operation was asked for
  std::optional<std::int64_t> source_shard_id;  // when all rows come from one shard
  std::optional<std::int64_t> target_shard_id;
  int batch_size = 0;
  nlohmann::json progress;               // totals known when planned
};

// Inserts the operation, running and held by this process, in the caller's transaction (which
// checks first that nothing overlaps). Returns its id.
std::string insert_running(pqxx::work& tx, const NewOperation& op);
// Inserts an operation of no map (an archive run), running and held by this process.
std::string insert_running(pqxx::work& tx, OperationKind kind, const nlohmann::json& args, int batch_size);
// Inserts an operation that was done when it was journaled (check's fixes: the journal records
// who changed what and when). Returns its id.
std::string insert_done(pqxx::work& tx, OperationKind kind, const nlohmann::json& args,
                        const nlohmann::json& progress);

// One live runner per operation: a session advisory lock on the catalog, released by the server
// the moment the holding process dies, so a killed run can be resumed at once.
bool try_lock_runner(pqxx::work& tx, const std::string& op_id);
void unlock_runner(pqxx::work& tx, const std::string& op_id);
// Whether no live process runs the operation (its runner lock is free). Leaves the lock free.
bool runner_gone(pqxx::work& tx, const std::string& op_id);

// Takes the operation over for this process (running, error cleared, lease renewed) and bumps
// its fencing token, which a process that ran it before no longer holds. Returns the new token.
std::int64_t take_over(pqxx::work& tx, const std::string& op_id);
// Locks the operation's row and throws locked_error unless `token` is still current: every
// catalog write of a runner checks it first, so a process taken over stops without writing.
void check_fencing_token(pqxx::work& tx, const std::string& op_id, std::int64_t token);
// Records the phase the operation reached and renews its lease (60 s).
void heartbeat(pqxx::work& tx, const std::string& op_id, const std::string& phase);
bool cancel_requested(pqxx::work& tx, const std::string& op_id);
// Ends the operation as `status` (done or cancelled) and drops its lease.
void mark_finished(pqxx::work& tx, const std::string& op_id, OperationStatus status);
// Journals a failure for `op show`, unless the operation was taken over since (`token`); it
// stays resumable.
void mark_failed(pqxx::work& tx, const std::string& op_id, const std::string& error, std::int64_t token);

// Journals `e` as the operation's failure (best effort: the catalog may be what failed) and
// returns the error to throw: the same kind, naming the operation (`what`, e.g. "archive run"),
// with a hint to resume it unless `e` has a better one.
Error failed(pg::Connection& catalog, const std::string& op_id, const Error& e, std::int64_t token,
             const std::string& what = "operation");

// An operation as `op list|show|wait` report it. Batch counts and the sources come from
// shardctl.op_batches (none for kinds without batches).
struct OpStatus {
  std::string id;
  OperationKind kind = OperationKind::split;
  std::string map;
  OperationStatus status = OperationStatus::running;
  std::string phase;
  std::string range;
  std::string source;
  std::string target;
  int batches = 0;
  int batches_done = 0;
  std::int64_t rows_moved = 0;
  std::int64_t rows_total = 0;  // when planned (0 for operations journaled before version 3)
  std::int64_t keys_done = 0;
  std::int64_t keys_total = 0;
  bool cancel_requested = false;
  std::string error;
  std::string lease_holder;
  std::string created_at;
  std::string updated_at;
  // How long the batches' keys were refused to writers (offline to online), median and
  // longest; none before any batch came back online.
  std::optional<double> offline_median_seconds, offline_max_seconds;
};

nlohmann::json to_json(const OpStatus& op);
// 75: a live process runs the operation (`op` as operation_status() read it).
Error run_by_another(const OpStatus& op);

// Usage error when `op_id` is no operation id or names none.
OpStatus operation_status(pg::Connection& catalog, const std::string& op_id);
// The same, but none when the catalog has no such operation (still a usage error for text
// that is no operation id).
std::optional<OpStatus> find_operation(pg::Connection& catalog, const std::string& op_id);
// Every operation, newest first.
std::vector<OpStatus> list_operations(pg::Connection& catalog);
// Asks the operation's runner to stop at its next step (it reads cancel_requested()).
void request_cancel(pg::Connection& catalog, const std::string& op_id);

}  // namespace shardctl::journal
