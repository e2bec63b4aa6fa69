// Runner: the per-batch protocol. Catalog steps commit together with their journal entry;
// steps on the shards are idempotent and journaled right after they happen, so a process
// killed anywhere leaves the operation resumable: `op resume` redoes at most the step in
// flight, and each step checks what is already done. `op cancel` of a batch that is offline
// or copied rolls it back; a flipped batch is finished (its keys already live on the target).
#include "migrate/runner.hpp"
#include "migrate/server_digest.hpp"
#include "refdata/sync.hpp"

#include "migrate/copy_sql.hpp"
#include "migrate/index_use.hpp"
#include "migrate/load_digest.hpp"
#include "migrate/stopwatch.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>
#include <set>

#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "shardio/copy_digest.hpp"
#include "shardio/copy_parts.hpp"
#include "journal/journal.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/shard_schema.hpp"
#include "shardio/value_digest.hpp"

namespace shardctl::migrate {
using routing::KeyRange;

namespace {

using shardio::session_settings;

}  // namespace

Runner::Runner(pg::Connection& catalog, RunContext ctx, std::function<void(const Progress&)> progress)
    : catalog_(catalog), ctx_(std::move(ctx)), progress_(std::move(progress)) {}

Runner::~Runner() = default;

Runner::CatalogRange Runner::catalog_range(const KeyRange& r) const {
  return catalog::claim_params(catalog::bound_type(ctx_.map.kind, ctx_.map.key_type), points() ? r.low : std::nullopt, r);
}

const catalog::Shard& Runner::shard(std::int64_t id) const {
  auto it = ctx_.shards.find(id);
  if (it == ctx_.shards.end()) throw internal_error("shard id " + std::to_string(id) + " of operation " + ctx_.op_id + " is gone");
  return it->second;
}

namespace {

// A connection to a batch's source as the runner's sessions have it.
std::unique_ptr<shardio::RawConn> source_session(const catalog::Shard& s) {
  auto conn = std::make_unique<shardio::RawConn>(s.dsn, "shard " + s.name);
  conn->script(session_settings);
  conn->exec(bulk_guard_session);
  return conn;
}

}  // namespace

shardio::RawConn& Runner::source(const Batch& b) {
  auto& conn = sources_[b.source_id];
  if (!conn) conn = source_session(shard(b.source_id));
  return *conn;
}

shardio::RawConn& Runner::purger(const Batch& b) {
  auto& conn = purgers_[b.source_id];
  if (!conn) conn = source_session(shard(b.source_id));
  return *conn;
}

void Runner::fence(pqxx::work& tx) { journal::check_fencing_token(tx, ctx_.op_id, ctx_.token); }

void Runner::journal(const Batch& b, BatchStep step, std::int64_t rows) {
  std::string word(to_text(step));
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    tx.exec_params("UPDATE shardctl.op_batches SET step = $3, rows_moved = CASE WHEN $4 >= 0 THEN $4 ELSE rows_moved END, "
                   "updated_at = now() WHERE op_id = $1 AND batch_no = $2",
                   ctx_.op_id, b.no, word, rows);
    journal::heartbeat(tx, ctx_.op_id, "batch " + std::to_string(b.no) + " " + word);
  });
}

std::vector<Runner::Batch> Runner::batches() {
  std::vector<Batch> out;
  routing::KeyType bt = catalog::bound_type(ctx_.map.kind, ctx_.map.key_type);
  catalog_.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec_params(
             "SELECT b.batch_no, coalesce(lower(b.int_range)::text, lower(b.text_range)::text, lower(b.uuid_range)::text), "
             "coalesce(upper(b.int_range)::text, upper(b.text_range)::text, upper(b.uuid_range)::text), b.step, "
             "coalesce(b.source_shard_id, o.source_shard_id), coalesce(b.checksum, ''), "
             // A batch flipped before catalog 12 journaled no version: the map's now is no lower.
             "CASE WHEN b.step IN ('flipped', 'done') THEN coalesce(b.flip_version, "
             "(SELECT m.version FROM shardctl.maps m WHERE m.map_id = $2)) END "
             "FROM shardctl.op_batches b JOIN shardctl.operations o USING (op_id) WHERE b.op_id = $1 ORDER BY b.batch_no",
             ctx_.op_id, ctx_.map.id)) {
      Batch b{r[0].as<int>(), {}, read_word<BatchStep>(r[3].as<std::string>()), r[4].as<std::int64_t>(), r[5].as<std::string>(),
              std::nullopt};
      if (!r[6].is_null()) b.flip_version = r[6].as<std::int64_t>();
      if (!r[1].is_null()) b.range.low = routing::parse_key(bt, r[1].as<std::string>());
      if (!r[2].is_null()) b.range.high = routing::parse_key(bt, r[2].as<std::string>());
      b.range = catalog::claimed_keys(ctx_.map.kind, ctx_.map.key_type, b.range);  // a point is journaled [k,k]
      out.push_back(b);
    }
  });
  return out;
}

bool Runner::cancel_requested() {
  bool cancel = false;
  catalog_.read([&](pqxx::work& tx) {
    cancel = journal::cancel_requested(tx, ctx_.op_id);
  });
  return cancel;
}

// Marks the batch's mapping offline (cutting it out of the mapping that holds it, for ranges)
// and journals it, in one catalog transaction; then guards the batch on the source.
void Runner::take_offline(const Batch& b) {
  CatalogRange c = catalog_range(b.range);
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    std::string batch_expr = ctx_.ctor + "($3, $4, $5)";
    auto exact = tx.exec_params("UPDATE shardctl.mappings SET status = 'offline' WHERE map_id = $1 AND shard_id = $2 AND " +
                                    ctx_.column + " = " + batch_expr + " RETURNING mapping_id",
                                ctx_.map.id, b.source_id, c.low, c.high, c.bounds);
    if (exact.empty()) {
      if (points())
        throw internal_error("map " + ctx_.map.name + " no longer maps key " + routing::format_key(*b.range.low) + " to " +
                             shard(b.source_id).name);
      cut_mapping(tx, b, c, catalog::MappingStatus::offline);
    }
    tx.exec_params("UPDATE shardctl.op_batches SET step = 'offline', offline_at = coalesce(offline_at, clock_timestamp()), "
                   "updated_at = now() WHERE op_id = $1 AND batch_no = $2",
                   ctx_.op_id, b.no);
    journal::heartbeat(tx, ctx_.op_id, "batch " + std::to_string(b.no) + " offline");
  });
  faults_.point("offline.mapping", context(b));
  guard_source(b);
}

// The batch's write guard on the source, committed before any row is read, then a wait for
// the transactions that began before it (their snapshots cannot see the guard). Idempotent:
// a resumed batch runs it again.
void Runner::guard_source(const Batch& b) {
  shardio::RawConn& src = source(b);
  guard_batch(src, ctx_.space, guarded(), owner(), b.no, b.range);
  catalog_.transact([&](pqxx::work& tx) {
    for (const auto& t : ctx_.tables)
      tx.exec_params("INSERT INTO shardctl.guards (op_id, shard_id, table_name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                     ctx_.op_id, b.source_id, t.name);
  });
  faults_.point("offline.guard", context(b));
  wait_for_older_transactions(src, ctx_.guard_wait_seconds);
}

// Replaces the source mapping holding the batch by up to three: the part before the batch,
// the batch (in `status`), the part after it.
void Runner::cut_mapping(pqxx::work& tx, const Batch& b, const CatalogRange& c, catalog::MappingStatus status) {
  std::string batch_expr = ctx_.ctor + "($3, $4, $5)";
  auto holder = tx.exec_params("SELECT mapping_id, lower(" + ctx_.column + ")::text, upper(" + ctx_.column +
                                   ")::text FROM shardctl.mappings WHERE map_id = $1 AND shard_id = $2 AND " + ctx_.column +
                                   " @> " + batch_expr + " FOR UPDATE",
                               ctx_.map.id, b.source_id, c.low, c.high, c.bounds);
  if (holder.empty())
    throw internal_error("no mapping of map " + ctx_.map.name + " on " + shard(b.source_id).name + " holds batch " +
                         routing::format_range(b.range));
  auto id = holder[0][0].as<std::int64_t>();
  std::optional<std::string> h_lo, h_hi;
  if (!holder[0][1].is_null()) h_lo = holder[0][1].as<std::string>();
  if (!holder[0][2].is_null()) h_hi = holder[0][2].as<std::string>();
  tx.exec_params("DELETE FROM shardctl.mappings WHERE mapping_id = $1", id);
  auto insert = [&](const std::optional<std::string>& l, const std::optional<std::string>& u, const std::string& status) {
    tx.exec_params("INSERT INTO shardctl.mappings (map_id, shard_id, status, " + ctx_.column + ") VALUES ($1, $2, $5, " +
                       ctx_.ctor + "($3, $4, '[)'))",
                   ctx_.map.id, b.source_id, l, u, status);
  };
  if (c.low && h_lo != c.low) insert(h_lo, c.low, "online");  // the part before the batch
  insert(c.low, c.high, std::string(catalog::to_text(status)));
  if (c.high && h_hi != c.high) insert(c.high, h_hi, "online");  // the part after it
}

// Copies the batch's rows of every table, parents first, in one target transaction: the
// target holds all of the batch or none of it. A batch found on the target was committed by
// an earlier run of this operation (the target range was checked empty before the first one).
std::int64_t Runner::copy(const Batch& b) {
  shardio::RawConn& src = source(b);
  bool present = on_target(b);
  forget_last_load();
  std::int64_t rows = present ? 0 : load(src, b);
  faults_.point("copy.commit", context(b));
  return present ? rows_on_target(b) : rows;
}

// What the last load streamed and read back is another batch's (or of another snapshot).
void Runner::forget_last_load() {
  streamed_.clear();
  loaded_.clear();
  read_in_load_ = {};
  streamed_batch_ = -1;
}

// Deletes the batch's rows from the target, children first, in one transaction.
void Runner::delete_from_target(const Batch& b) {
  target_->exec("BEGIN");
  // A target that gave these keys away once keeps a fence on them until a flip brings them
  // back (an online copy passes it, the fence stays): this transaction passes it too.
  bypass_fences_in(*target_, ctx_.map.id, catalog::bound_type(ctx_.map.kind, ctx_.map.key_type), b.range);
  for (auto it = ctx_.tables.rbegin(); it != ctx_.tables.rend(); ++it)
    target_->exec("DELETE FROM " + it->quoted + " WHERE " + filter(*target_, *it, b.range));
  target_->exec("COMMIT");
}

// The target's fences on the batch's keys (it gave them away once), lifted once they are its
// own again: after the flip. Idempotent.
void Runner::lift_target_fences(const Batch& b) {
  target_->exec("BEGIN");
  lift_fences_in(*target_, ctx_.map.id, catalog::bound_type(ctx_.map.kind, ctx_.map.key_type), b.range);
  target_->exec("COMMIT");
}

// Whether any table has a row of the batch on the target.
bool Runner::on_target(const Batch& b) {
  bool present = false;
  for (const auto& t : ctx_.tables)
    present = present || target_->query("SELECT EXISTS (SELECT 1 FROM " + t.quoted + " WHERE " +
                                        filter(*target_, t, b.range) + ")")[0][0] == "t";
  return present;
}

std::int64_t Runner::rows_on_target(const Batch& b) {
  std::int64_t rows = 0;
  for (const auto& t : ctx_.tables)
    rows += std::stoll(target_->query("SELECT count(*) FROM " + t.quoted + " WHERE " + filter(*target_, t, b.range))[0][0]);
  return rows;
}

// The batch's rows of every table pumped from the source into the target, in one transaction
// of the target. Returns the rows loaded.
std::int64_t Runner::load(shardio::RawConn& src, const Batch& b) {
  target_->exec("BEGIN");
  // The fast path: FK triggers skipped for this transaction (see load_path.hpp); the guard's
  // triggers are ENABLE ALWAYS and still fire.
  if (ctx_.path.skip_load_checks) target_->exec("SET LOCAL session_replication_role = replica");
  // Keys coming back to a shard that once gave them away stay the source's until the flip:
  // the target's fence on them lets this transaction (and, online, the stream's apply worker)
  // through, and keeps refusing applications with a stale map until lift_target_fences()
  // after the flip; a cancelled batch leaves it standing (t_move_guard).
  bypass_fences_in(*target_, ctx_.map.id, catalog::bound_type(ctx_.map.kind, ctx_.map.key_type), b.range);
  std::int64_t rows = 0;
  for (const auto& t : ctx_.tables) {
    rows += load_table(src, t, b);
    faults_.point("copy.table", context(b));
  }
  target_->exec("COMMIT");
  streamed_batch_ = b.no;
  return rows;
}

// One table's rows of the batch, in the source's primary-key order, digested as they pass
// (streamed_: what verify compares the target with). Returns the rows loaded.
std::int64_t Runner::load_table(shardio::RawConn& src, const PlannedTable& t, const Batch& b) {
  std::string order = t.order_by.empty() ? "" : " ORDER BY " + column_list(t.order_by);
  auto kinds = value_kinds(t, b);
  shardio::CopyDigest digest(t.binary, kinds);
  std::string select = "SELECT " + column_list(t.columns) + " FROM " + t.quoted + " WHERE " + filter(src, t, b.range) + order;
  CopyStatements sql{"COPY (" + select + ") TO STDOUT" + copy_format(t.binary),
                     "COPY " + t.quoted + " (" + column_list(t.columns) + ") FROM STDIN" + copy_format(t.binary)};
  // Rows that leave the source as its index finds them, not after a sort (index_use.hpp).
  std::optional<SortsOff> streaming;
  if (!order.empty() && streams_without_sort(src, b, t, select)) streaming.emplace(src);
  if (kinds.empty() || ctx_.parallel > 1) {
    // Read back after the commit: by rows, or over --parallel connections.
    stats_.bytes += shardio::pump_copy(src, sql.out, *target_, sql.in, [&](std::string_view chunk) { digest.add(chunk); });
  } else {
    pump_reading_back(src, t, b, sql, kinds, digest);
  }
  if (!digest.complete()) throw internal_error("the COPY stream of " + t.name + " ended inside a row");
  streamed_[t.name] = {digest.text(), kinds.empty() ? "" : digest.value_text()};
  return digest.rows();
}

// Asked once per source and table: every batch's read has the same shape.
bool Runner::streams_without_sort(shardio::RawConn& src, const Batch& b, const PlannedTable& t, const std::string& select) {
  auto [at, fresh] = streams_without_sort_.try_emplace({b.source_id, t.name}, false);
  if (fresh) {
    at->second = streams_in_order_without_sort(src, select);
    stats_.read = describe_source_reads();
  }
  return at->second;
}

// For -v (Progress::read): "in primary-key order through an index: a, b; sorted by the source:
// c" (a table read so on any source is named there).
std::string Runner::describe_source_reads() const {
  std::string streamed, sorted;
  for (const auto& t : ctx_.tables) {
    bool any_streamed = false, any_sorted = false;
    for (const auto& [key, streams] : streams_without_sort_)
      if (key.second == t.name) (streams ? any_streamed : any_sorted) = true;
    if (any_streamed) streamed += (streamed.empty() ? "" : ", ") + t.name;
    if (any_sorted) sorted += (sorted.empty() ? "" : ", ") + t.name;
  }
  std::string out;
  if (!streamed.empty()) out = "in primary-key order through an index: " + streamed;
  if (!sorted.empty()) out += (out.empty() ? "" : "; ") + std::string("sorted by the source: ") + sorted;
  return out;
}

// The pump with the table's value digest read back in the load transaction, part by part as
// the rows load (load_digest.hpp): loaded_ keeps it for verify.
void Runner::pump_reading_back(shardio::RawConn& src, const PlannedTable& t, const Batch& b, const CopyStatements& sql,
                               const std::vector<shardio::ValueKind>& kinds, shardio::CopyDigest& digest) {
  LoadDigest back(*target_, shardio::value_digest_sql(value_columns(t, kinds)), t.quoted, filter(*target_, t, b.range),
                  read_by_blocks(t), ring_bytes());
  {
    Stopwatch w(read_in_load_seconds_);
    back.begin();
  }
  shardio::CopyParts parts{[&] { return digest.at_row_end(); }, [&] { return back.next_part_bytes(); },
                           [&] {
                             Stopwatch w(read_in_load_seconds_);
                             back.part_loaded();
                           }};
  stats_.bytes += shardio::pump_copy_in_parts(src, sql.out, *target_, sql.in,
                                              [&](std::string_view chunk) {
                                                digest.add(chunk);
                                                back.add_stream_bytes(chunk.size());
                                              },
                                              parts);
  Stopwatch w(read_in_load_seconds_);
  loaded_[t.name] = back.finish(digest.value_text());
  // Rows that went into free space of older pages: later batches read the range whole.
  if (back.read_whole()) read_by_blocks_[t.name] = false;
  read_in_load_.by_block += back.parts_read();
  read_in_load_.by_range += back.read_whole() ? 1 : 0;
}

// Points the batch's mapping at the target, online, and journals the step with what was
// verified, in one catalog transaction. An online batch never went offline, so its range may
// still be part of a larger mapping of the source: `cut` cuts it out first (cut_mapping).
std::int64_t Runner::flip(const Batch& b, const std::string& verified, bool cut) {
  CatalogRange c = catalog_range(b.range);
  std::int64_t version = 0;
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    if (cut && tx.exec_params("SELECT 1 FROM shardctl.mappings WHERE map_id = $1 AND shard_id IN ($2, $6) AND " + ctx_.column +
                                  " = " + ctx_.ctor + "($3, $4, $5)",
                              ctx_.map.id, b.source_id, c.low, c.high, c.bounds, ctx_.target.id)
                   .empty())
      cut_mapping(tx, b, c, catalog::MappingStatus::online);
    tx.exec_params("UPDATE shardctl.mappings SET shard_id = $6, status = 'online' WHERE map_id = $1 AND shard_id IN ($2, $6) AND " +
                       ctx_.column + " = " + ctx_.ctor + "($3, $4, $5)",
                   ctx_.map.id, b.source_id, c.low, c.high, c.bounds, ctx_.target.id);
    // The catalog bumped the map's version once for this transaction's mapping changes (catalog
    // 12): the version routers must reach to see the keys on the target.
    version = tx.exec_params1("UPDATE shardctl.op_batches SET step = 'flipped', checksum = $3, online_at = clock_timestamp(), "
                              "updated_at = now(), flip_version = (SELECT m.version FROM shardctl.maps m WHERE m.map_id = $4) "
                              "WHERE op_id = $1 AND batch_no = $2 RETURNING flip_version",
                              ctx_.op_id, b.no, verified, ctx_.map.id)[0]
                  .as<std::int64_t>();
    journal::heartbeat(tx, ctx_.op_id, "batch " + std::to_string(b.no) + " flipped");
  });
  faults_.point("flip", context(b));
  return version;
}

// Journals a purged batch as done.
void Runner::done(const Batch& b, std::int64_t rows) {
  journal(b, BatchStep::done);
  faults_.point("journal.done", context(b));
  stats_.rows += rows;
  if (progress_) progress_(stats_);
}

// A group's purge (purge.cpp) up to its COMMIT, on a thread of its own over a second
// connection to its source (purger()), while this thread copies, verifies and flips the next
// batch: the source deletes while the target loads, and the move costs about the longer of the
// two rather than their sum. On an error on this thread, the destructor waits for the purge;
// its transaction is never committed, and resume purges the group again.
struct Runner::PurgeBeside {
  using clock = std::chrono::steady_clock;
  PurgeGroup group;
  shardio::RawConn& conn;
  clock::time_point start = clock::now();
  // The purge to commit, and when its rows were deleted.
  std::future<std::pair<OpenPurge, clock::time_point>> rows;

  PurgeBeside(const Runner& runner, shardio::RawConn& source, PurgeGroup pending)
      : group(std::move(pending)), conn(source), rows(std::async(std::launch::async, [this, &runner] {
          auto purged = runner.purge_rows(conn, group, nullptr);
          return std::make_pair(std::move(purged), clock::now());
        })) {}
  PurgeBeside(const PurgeBeside&) = delete;
  PurgeBeside& operator=(const PurgeBeside&) = delete;
};

// Waits for the purge beside, commits it and journals its batches done, and counts its time:
// the verify's overlap with it (between verify_start and verify_end) is
// Progress::verify_beside_seconds.
void Runner::commit_purge_beside(PurgeBeside& p, std::chrono::steady_clock::time_point verify_start,
                                 std::chrono::steady_clock::time_point verify_end) {
  auto [purged, purge_end] = p.rows.get();
  auto overlap = std::min(verify_end, purge_end) - std::max(verify_start, p.start);
  if (overlap.count() > 0) stats_.verify_beside_seconds += std::chrono::duration<double>(overlap).count();
  stats_.purge_seconds += std::chrono::duration<double>(purge_end - p.start).count();
  if (!purged.batches.empty()) {
    Stopwatch w(stats_.purge_seconds);
    purge_commit(p.conn, purged);
  }
  for (const auto& f : p.group) done(f.batch, f.rows);
}

// Undoes a batch that is offline or copied (`op cancel`): its rows leave the target, its
// mapping goes back online on the source, in that order; the guard goes with the rest of the
// operation's in finish(). Idempotent.
void Runner::roll_back(const Batch& b) {
  delete_from_target(b);
  faults_.point("rollback.target", context(b));
  CatalogRange c = catalog_range(b.range);
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    tx.exec_params("UPDATE shardctl.mappings SET status = 'online' WHERE map_id = $1 AND shard_id = $2 AND " + ctx_.column +
                       " = " + ctx_.ctor + "($3, $4, $5)",
                   ctx_.map.id, b.source_id, c.low, c.high, c.bounds);
    tx.exec_params("UPDATE shardctl.op_batches SET step = 'planned', rows_moved = 0, offline_at = NULL, updated_at = now() "
                   "WHERE op_id = $1 AND batch_no = $2",
                   ctx_.op_id, b.no);
  });
  faults_.point("rollback.mapping", context(b));
}

// --sync-references: the target's differing copies made identical to the first batch's
// source's before any batch copies (refdata/sync.hpp: only the rows of differing chunks, one
// transaction, verified). Idempotent: a resumed run finds nothing left to change.
void Runner::sync_references(const Batch& first) {
  if (ctx_.references_to_sync.empty()) return;
  const auto& from = shard(first.source_id);
  std::vector<refdata::RefTable> tables;
  for (const auto& t : ctx_.references_to_sync) tables.push_back({t, t, from.name, std::nullopt});
  refdata::SyncOptions options;
  options.from = from.name;
  auto report = refdata::sync_references({{from.name, from.dsn}, {ctx_.target.name, ctx_.target.dsn}}, tables, options);
  for (const auto& s : report.shards) {
    if (!s.unreachable.empty()) throw unavailable_error("syncing reference tables to " + s.shard + ": " + s.unreachable);
    if (!s.refused.empty())
      throw usage_error("reference tables on " + s.shard + " not synced: " + s.refused,
                        "resolve it, then `shardctl op resume " + ctx_.op_id + "`, or `shardctl op cancel " + ctx_.op_id + "`");
  }
  faults_.point("references.sync");
}

void Runner::copy_references(shardio::RawConn& from) {
  for (const auto& ref : ctx_.references) {
    if (shardio::table_columns(*target_, ref).empty()) continue;
    if (target_->query("SELECT EXISTS (SELECT 1 FROM " + ref + ")")[0][0] == "t") continue;
    std::vector<std::string> cols;
    for (const auto& c : shardio::table_columns(from, ref)) cols.push_back(c.name);
    target_->exec("BEGIN");
    shardio::pump_copy(from, "COPY (SELECT " + column_list(cols) + " FROM " + ref + ") TO STDOUT (FORMAT binary)", *target_,
              "COPY " + ref + " (" + column_list(cols) + ") FROM STDIN (FORMAT binary)");
    target_->exec("COMMIT");
  }
  faults_.point("references");
}

// Joins adjacent online mappings of the same shard inside the operation's range, so a split
// or merge leaves one mapping per shard and side however many batches it took. List maps have
// points, which never join.
void Runner::coalesce() {
  if (points()) return;
  routing::KeyType bt = catalog::bound_type(ctx_.map.kind, ctx_.map.key_type);
  auto lo = routing::format_bound(ctx_.range.low), hi = routing::format_bound(ctx_.range.high);
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    auto rows = tx.exec_params("SELECT mapping_id, shard_id, status, lower(" + ctx_.column + ")::text, upper(" + ctx_.column +
                                   ")::text FROM shardctl.mappings WHERE map_id = $1 AND " + ctx_.column + " <@ " +
                                   ctx_.ctor + "($2, $3, '[)') ORDER BY lower(" + ctx_.column + ") NULLS FIRST FOR UPDATE",
                               ctx_.map.id, lo, hi);
    std::size_t i = 0;
    while (i < rows.size()) {
      std::size_t j = i;
      while (j + 1 < rows.size() && rows[j + 1][1].as<std::int64_t>() == rows[i][1].as<std::int64_t>() &&
             read_word<catalog::MappingStatus>(rows[j + 1][2].as<std::string>()) == catalog::MappingStatus::online &&
             read_word<catalog::MappingStatus>(rows[i][2].as<std::string>()) == catalog::MappingStatus::online &&
             !rows[j][4].is_null() && !rows[j + 1][3].is_null() &&
             routing::compare_keys(routing::parse_key(bt, rows[j][4].as<std::string>()),
                                   routing::parse_key(bt, rows[j + 1][3].as<std::string>())) == 0)
        ++j;
      if (j > i) {
        std::optional<std::string> l, u;
        if (!rows[i][3].is_null()) l = rows[i][3].as<std::string>();
        if (!rows[j][4].is_null()) u = rows[j][4].as<std::string>();
        for (std::size_t k = i; k <= j; ++k)
          tx.exec_params("DELETE FROM shardctl.mappings WHERE mapping_id = $1", rows[k][0].as<std::int64_t>());
        tx.exec_params("INSERT INTO shardctl.mappings (map_id, shard_id, " + ctx_.column + ") VALUES ($1, $2, " + ctx_.ctor +
                           "($3, $4, '[)'))",
                       ctx_.map.id, rows[i][1].as<std::int64_t>(), l, u);
      }
      i = j + 1;
    }
  });
  faults_.point("coalesce");
}

void Runner::finish(journal::OperationStatus status, const std::vector<Batch>& all) {
  // No stream outlives its operation: a slot left behind would hold the source's WAL.
  if (ctx_.online)
    for (const auto& b : all) drop_stream(b);
  coalesce();
  // Offline ranges go; fences stay on each source until lifted (`op unfence`) or expired.
  std::set<std::int64_t> done;
  for (const auto& b : all)
    if (done.insert(b.source_id).second) release_guard(source(b), ctx_.op_id, ctx_.map.id, guarded(), false);
  // The target may have lifted its last fence of the map by loading keys it once gave away.
  release_guard(*target_, ctx_.op_id, ctx_.map.id, guarded(), false);
  faults_.point("unguard");
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    tx.exec_params("DELETE FROM shardctl.guards WHERE op_id = $1", ctx_.op_id);
    journal::mark_finished(tx, ctx_.op_id, status);
  });
}

GuardOwner Runner::owner() const { return GuardOwner{ctx_.op_id, ctx_.map.id, ctx_.target.name, ctx_.map.name}; }

std::vector<GuardedTable> Runner::guarded() const {
  std::vector<GuardedTable> out;
  for (const auto& t : ctx_.tables) out.push_back({t.quoted, t.key_column});
  return out;
}

std::string Runner::filter(shardio::RawConn& conn, const PlannedTable& t, const KeyRange& r) const {
  return shardio::key_filter(conn, ctx_.space, shardio::KeyColumn{catalog::quote_ident(t.key_column), t.key_own_collation}, r);
}

void Runner::run() {
  open_target();
  auto all = batches();
  if (all.empty()) throw internal_error("operation " + ctx_.op_id + " has no batches");
  bool cancel = cancel_requested();
  if (!cancel) {
    sync_references(all.front());
    copy_references(source(all.front()));
  }
  stats_.batches = static_cast<int>(all.size());
  stats_.path = ctx_.path.why;
  // Batches flipped and not purged yet (PurgeGroup): they purge together beside the copy of the
  // first batch that cannot join them, or at the end. Their rows stay guarded on the source
  // meanwhile, and the map already routes their keys to the target.
  PurgeGroup pending;
  for (auto& b : all) {
    stats_.batch = b.no;
    if (!(ctx_.online ? advance_online(b, cancel, pending) : advance(b, cancel, pending))) {
      finish(journal::OperationStatus::cancelled, all);
      return;
    }
  }
  purge_pending(pending);
  finish(journal::OperationStatus::done, all);  // every batch moved, even if a cancel came too late to stop one
  faults_.point("finished");
  if (progress_) progress_(stats_);
}

void Runner::open_target() {
  target_ = std::make_unique<shardio::RawConn>(ctx_.target.dsn, "shard " + ctx_.target.name);
  target_->script(session_settings);
  target_->exec(bulk_guard_session);
  // It also reads batches back to verify them (with one reader).
  target_->script(shardio::reader_session);
  // The guard's objects on the target too: assert_route then answers on every shard the move
  // touched (the keys' new owner first of all).
  ensure_guard_objects(*target_);
}

// Takes batch `b` from its journaled step (batch_step.hpp) through its flip, and leaves its
// purge pending; a flipped batch only becomes the pending purge. False when the operation
// stops here, cancelled: the pending purge done, a batch in flight rolled back.
bool Runner::advance(const Batch& b, bool cancel, PurgeGroup& pending) {
  ResumeFrom from = resume_from(b.step);
  if (from == ResumeFrom::skip) return true;
  if (stops_for_cancel(from, cancel)) {
    purge_pending(pending);
    if (on_cancel(from) == OnCancel::roll_back) roll_back(b);  // in flight when a run was killed
    return false;
  }
  if (from == ResumeFrom::purge) {  // flipped by an earlier run, which may have died before the lift
    lift_target_fences(b);
    add_pending(pending, Flipped{b, b.verified, 0, 0});
    return true;
  }
  if (from == ResumeFrom::take_offline) {
    {
      Stopwatch w(stats_.catalog_seconds);
      take_offline(b);
    }
    faults_.point("journal.offline", context(b));
  } else {
    guard_source(b);  // a run killed before the guard committed left the batch unguarded
  }
  add_pending(pending, copy_verify_flip(b, pending));
  return true;
}

// Whether a cancel stops the run at a batch it resumes `from`: one requested before this run
// at any batch not flipped yet; one requested while it runs, before the next batch it would
// take offline.
bool Runner::stops_for_cancel(ResumeFrom from, bool cancel) {
  if (on_cancel(from) == OnCancel::carry_on) return false;
  return cancel || (from == ResumeFrom::take_offline && cancel_requested());
}

// Copies the batch, verifies it and flips it. The pending group purges beside (PurgeBeside),
// committed after this batch's flip, unless this batch may join it. Returns the batch flipped.
Runner::Flipped Runner::copy_verify_flip(const Batch& b, PurgeGroup& pending) {
  std::optional<PurgeBeside> purging;
  if (!pending.empty() && !room_for(pending, b)) {
    purging.emplace(*this, purger(pending.front().batch), std::move(pending));
    pending.clear();
  }
  auto bytes = stats_.bytes;
  // Also when journaled as copied: copy() finds the batch on the target and does nothing,
  // unless the target lost it (a crash of a server that does not sync commits).
  std::int64_t rows = timed_copy(b);
  if (!has_reached(b.step, BatchStep::copied)) journal(b, BatchStep::copied, rows);
  faults_.point("journal.copied", context(b));
  std::string verified;
  auto verify_start = std::chrono::steady_clock::now();
  {
    Stopwatch w(stats_.verify_seconds);
    verified = verify(b);
  }
  auto verify_end = std::chrono::steady_clock::now();
  Batch flipped = b;
  flipped.flip_version = flip(b, verified);
  faults_.point("journal.flipped", context(b));
  lift_target_fences(b);
  if (purging) commit_purge_beside(*purging, verify_start, verify_end);
  return Flipped{flipped, verified, rows, stats_.bytes - bytes};
}

bool Runner::room_for(const PurgeGroup& group, const Batch& b) const {
  if (group.empty()) return true;
  const auto& last = group.back();
  std::uint64_t bytes = 0;
  for (const auto& f : group) bytes += f.bytes;
  return last.batch.source_id == b.source_id && last.batch.range.high && b.range.low &&
         routing::compare_keys(*last.batch.range.high, *b.range.low) == 0 && server_digested(last) &&
         group.size() < purge_group_batches && bytes < purge_group_bytes;
}

void Runner::add_pending(PurgeGroup& pending, Flipped f) {
  if (!pending.empty() && !(room_for(pending, f.batch) && server_digested(f))) purge_pending(pending);
  pending.push_back(std::move(f));
}

// copy(), timed: the reads back inside its load transaction are the verify's, not the copy's.
std::int64_t Runner::timed_copy(const Batch& b) {
  std::int64_t rows = 0;
  {
    Stopwatch w(stats_.copy_seconds);
    rows = copy(b);
  }
  stats_.copy_seconds -= read_in_load_seconds_;
  stats_.verify_seconds += read_in_load_seconds_;
  read_in_load_seconds_ = 0;
  return rows;
}

// Purges the pending group, if any, and journals its batches done.
void Runner::purge_pending(PurgeGroup& pending) {
  if (pending.empty()) return;
  {
    Stopwatch w(stats_.purge_seconds);
    purge(pending);
  }
  for (const auto& f : pending) done(f.batch, f.rows);
  pending.clear();
}

}  // namespace shardctl::migrate
