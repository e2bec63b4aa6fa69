// The Runner's online protocol (online.hpp): a batch's replication stream, its catch-up and
// cut-over, its roll back. The steps it shares with offline batches (load, verify, purge,
// journal) are runner.cpp's and verify.cpp's.
#include "migrate/runner.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "catalog/key_sql.hpp"
#include "journal/journal.hpp"
#include "migrate/stopwatch.hpp"
#include "shardside/guard.hpp"
#include "shardside/replication.hpp"

namespace shardctl::migrate {
namespace {

using clock = std::chrono::steady_clock;

int ms_left(clock::time_point deadline) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count());
}

// The sequences a table's columns own (serial and identity columns), as regclass text.
std::vector<std::string> owned_sequences(shardio::RawConn& conn, const std::string& quoted_table) {
  std::vector<std::string> out;
  for (const auto& r : conn.query("SELECT d.objid::regclass::text FROM pg_depend d JOIN pg_class c ON c.oid = d.objid "
                                  "WHERE d.refobjid = $1::regclass AND d.classid = 'pg_class'::regclass "
                                  "AND c.relkind = 'S' AND d.deptype IN ('a', 'i') ORDER BY 1",
                                  {quoted_table}))
    out.push_back(r[0]);
  return out;
}

}  // namespace

// Sequences are not replicated: each one the moving tables own is set on the target at least
// as high as the source's, while the cut-over holds the batch's writers (a value a waiting
// writer already drew is in the source's last_value), so a row written on the target after
// the flip never takes an id a moved row has.
void Runner::sync_sequences(const Batch& b) {
  shardio::RawConn& src = source(b);
  for (const auto& t : ctx_.tables)
    for (const auto& seq : owned_sequences(src, t.quoted)) {
      auto r = src.query("SELECT last_value::text, is_called::text FROM " + seq);
      if (r.empty() || r[0][1] != "t") continue;  // never used on the source
      if (target_->query("SELECT to_regclass($1) IS NOT NULL", {seq})[0][0] != "t") continue;
      target_->query("SELECT setval($1::regclass, greatest($2::bigint, (SELECT CASE WHEN is_called THEN last_value END FROM " + seq +
                         ")))",
                     {seq, r[0][0]});
    }
}

std::string Runner::stream_name(const Batch& b) const { return shardside::replication_name(ctx_.op_id, b.no); }

// Takes a batch of an online operation from its journaled step through its flip and leaves its
// purge pending, as advance() does for offline batches. False when the operation stops here,
// cancelled.
bool Runner::advance_online(const Batch& b, bool cancel, PurgeGroup& pending) {
  OnlineFrom from = online_resume_from(b.step);
  if (from == OnlineFrom::skip) return true;
  bool stop = on_cancel(from) != OnCancel::carry_on &&
              (cancel || (from == OnlineFrom::start_stream && cancel_requested()));
  if (stop) {
    purge_pending(pending);
    if (on_cancel(from) == OnCancel::roll_back) roll_back_online(b);
    return false;
  }
  if (from == OnlineFrom::purge) {  // flipped by an earlier run: its stream may be left
    drop_stream(b);
    lift_target_fences(b);
    purge_pending(pending);
    pending.push_back(Flipped{b, b.verified, 0, 0});
    return true;
  }
  // The batch before this one is purged first: its source connection serves this cut-over.
  purge_pending(pending);
  std::int64_t rows = 0;
  // A copied batch whose slot the source invalidated (or lost) can never catch up: its copy is
  // dropped and the batch streams again from a new slot.
  if (from == OnlineFrom::cut_over && shardside::slot_health(source(b), stream_name(b)) != shardside::SlotHealth::usable)
    from = OnlineFrom::restart_stream;
  if (from == OnlineFrom::restart_stream) roll_back_stream(b);
  if (from != OnlineFrom::cut_over) rows = start_stream(b);
  auto cut = cut_over(b);
  if (!cut) {  // cancelled during catch-up
    roll_back_online(b);
    return false;
  }
  drop_stream(b);
  faults_.point("online.dropped", context(b));
  lift_target_fences(b);
  Batch flipped = b;
  flipped.flip_version = cut->flip_version;
  pending.push_back(Flipped{flipped, cut->verified, rows, 0});
  return true;
}

// Journals the batch as streaming, then creates its objects and copies it under the slot's
// snapshot; journals it copied with the rows loaded. Returns them.
std::int64_t Runner::start_stream(const Batch& b) {
  journal(b, BatchStep::streaming);
  faults_.point("online.streaming", context(b));
  shardio::RawConn& src = source(b);
  const auto& from = shard(b.source_id);
  std::string name = stream_name(b);
  // The guard's functions and triggers now, without a range: the cut-over then takes no lock on
  // the tables (a trigger's creation would queue every writer behind it).
  guard_batch(src, ctx_.space, guarded(), owner(), b.no, b.range, std::nullopt);
  std::vector<shardside::PublishedTable> published;
  for (const auto& t : ctx_.tables) published.push_back({t.quoted, filter(src, t, b.range)});
  shardside::create_publication(src, name, published);
  faults_.point("online.publication", context(b));
  std::int64_t rows = 0;
  {
    shardside::ExportedSlot slot(from.dsn, "shard " + from.name, name);
    faults_.point("online.slot", context(b));
    forget_last_load();
    Stopwatch w(stats_.copy_seconds);
    shardside::begin_snapshot_transaction(src, slot.snapshot_name());
    rows = load(src, b);  // one target transaction, let through the target's fences in the range
    src.exec("COMMIT");
  }
  // The copy's digests are of the snapshot: the cut-over digests the range afresh.
  forget_last_load();
  faults_.point("online.copied", context(b));
  shardside::create_subscription(*target_, {name, from.subscription_dsn(), name, name, false});
  // Killed here, the target has the subscription and the batch's rows while the journal still
  // says streaming: a resumed run drops the stream and the rows and streams the batch again
  // (advance_online, roll_back_stream), `op cancel` rolls both back.
  faults_.point("online.subscription", context(b));
  journal(b, BatchStep::copied, rows);
  faults_.point("journal.copied", context(b));
  return rows;
}

// Catches the subscription up, then cuts the batch over (online.hpp): returns what was
// verified once the batch is flipped, none when a cancel came during catch-up. A cut-over
// starts only when it predicts it fits (ready_to_cut_over); a moment that does not is waited
// out, up to max_cutover_deferrals times, after which the cut-over starts anyway, held to
// --cutover-timeout as always.
std::optional<Runner::CutOver> Runner::cut_over(const Batch& b) {
  const auto& s = *ctx_.online;
  std::string name = stream_name(b);
  auto progress = shardside::subscription_progress(*target_, name);
  if (!progress.exists) throw internal_error("batch " + std::to_string(b.no) + " of operation " + ctx_.op_id + " is copied but " +
                                             ctx_.target.name + " has no subscription " + name);
  if (!progress.enabled) shardside::enable_subscription(*target_, name);
  auto verify = cut_over_verify(b);
  std::string why;
  int deferred = 0;
  for (int attempt = 1; attempt <= s.cutover_tries;) {
    if (!catch_up(b)) return std::nullopt;
    faults_.point("online.caught_up", context(b));
    if (verify && !ready_to_cut_over(b, *verify, deferred < max_cutover_deferrals)) {
      ++deferred;
      ++stats_.cutovers_deferred;
      continue;
    }
    if (auto cut = try_cut_over(b, why, verify.get())) return cut;
    ++stats_.cutovers_given_up;
    stats_.last_give_up = why;
    faults_.point("online.gave_up", context(b));
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * attempt));
    ++attempt;
  }
  throw locked_error("the cut-over of batch " + std::to_string(b.no) + " (" + routing::format_range(b.range) + ") of operation " +
                         ctx_.op_id + " gave up " + std::to_string(s.cutover_tries) + " times; the last: " + why,
                     "the batch keeps streaming to " + ctx_.target.name + " and writers go on; `shardctl op resume " + ctx_.op_id +
                         "` tries again (give it more time with --cutover-timeout), `shardctl op cancel " + ctx_.op_id +
                         "` gives the move up");
}

// The window's predicted length: the time the target takes to apply a fresh source position
// (the lag the window waits out), and the keys changed since the batch was compared, at the
// rate measured so far. Too many keys: the batch is compared again (a fresh, smaller record).
bool Runner::ready_to_cut_over(const Batch& b, CutOverVerify& verify, bool may_defer) {
  const auto& s = *ctx_.online;
  double budget = std::min<double>(cutover_budget_ms, s.cutover_timeout_ms / 2.0);
  std::string name = stream_name(b);
  if (!verify.compared()) {
    std::optional<DigestDifference> difference;
    Stopwatch w(stats_.verify_seconds);
    auto lag_limit = std::chrono::milliseconds(static_cast<long>(s.max_lag_seconds * 1000) + 1000);
    if (verify.compare_ahead(source(b), *target_, lag_limit, difference) == CutOverVerify::Ahead::behind) return false;
    if (difference) {
      const auto& t = ctx_.tables[difference->table];
      verification_failed(b, t, difference->on_source, difference->on_target,
                          "nothing was deleted and the map still routes the batch to " + shard(b.source_id).name +
                              "; compare the batch's rows on both shards, then `shardctl op resume " + ctx_.op_id + "`");
    }
    faults_.point("online.compared", context(b));
  }
  if (!may_defer) return true;
  auto keys = verify.keys_now(*target_);
  if (verify.predicted_ms(keys) > budget * 0.6) {
    verify.forget();  // compared again at the next try: its record starts afresh
    return false;
  }
  auto position = shardside::flushed_wal_position(source(b));
  auto applied = shardside::wait_applied(*target_, name, position, std::chrono::milliseconds(static_cast<long>(budget * 4)));
  if (applied.outcome != shardside::WaitOutcome::applied) return false;
  return static_cast<double>(applied.waited.count()) + verify.predicted_ms(verify.keys_now(*target_)) <= budget;
}

// Waits until the target applies everything the source committed up to a fresh position within
// --max-lag. False when a cancel is asked for meanwhile. A subscription whose apply worker keeps
// failing (a moving table changed by DDL on one side: the stream carries no DDL; a row the
// target already has) stops it: waiting would change nothing.
bool Runner::catch_up(const Batch& b) {
  const auto& s = *ctx_.online;
  shardio::RawConn& src = source(b);
  std::string name = stream_name(b);
  auto lag_limit = std::chrono::milliseconds(static_cast<long>(s.max_lag_seconds * 1000));
  auto errors_before = shardside::subscription_progress(*target_, name).apply_errors;
  auto worker_seen = clock::now();
  for (;;) {
    auto position = shardside::flushed_wal_position(src);
    auto r = shardside::wait_applied(*target_, name, position, lag_limit);
    if (r.outcome == shardside::WaitOutcome::applied) return true;
    // Behind by more than --max-lag: wait for that position a second at a time, then measure again.
    while (r.outcome == shardside::WaitOutcome::timed_out) {
      if (r.last.worker_pid) worker_seen = clock::now();
      if (r.last.apply_errors > errors_before)
        throw locked_error("the subscription " + name + " on " + ctx_.target.name + " failed to apply batch " + std::to_string(b.no) +
                               "'s changes " + std::to_string(r.last.apply_errors - errors_before) +
                               " time(s): a moving table differs between the shards (DDL during an online move is not "
                               "replicated), or " + ctx_.target.name + " has a row the stream inserts",
                           ctx_.target.name + "'s server log names the table and the error; make the table match, then `shardctl op resume " +
                               ctx_.op_id + "`, or `shardctl op cancel " + ctx_.op_id + "`");
      if (clock::now() - worker_seen > std::chrono::seconds(60))
        throw unavailable_error("the subscription " + name + " on " + ctx_.target.name + " has had no apply worker for a minute",
                                ctx_.target.name + "'s server log says why (max_logical_replication_workers, the source's "
                                "reachability from the target); then `shardctl op resume " + ctx_.op_id + "`");
      if (cancel_requested()) return false;
      require_slot(b);
      r = shardside::wait_applied(*target_, name, position, std::chrono::seconds(1));
    }
    if (r.outcome == shardside::WaitOutcome::stopped)
      throw internal_error("the subscription " + name + " on " + ctx_.target.name + " stopped (dropped or disabled) while batch " +
                           std::to_string(b.no) + " caught up");
  }
}

// Stops the run (75) when the source's server invalidated the batch's slot (or it is gone):
// the subscription can never catch up from it, and waiting would only end in the minute's
// "no apply worker". A resumed run streams the batch again (advance_online).
void Runner::require_slot(const Batch& b) {
  shardio::RawConn& src = source(b);
  std::string name = stream_name(b);
  auto health = shardside::slot_health(src, name);
  if (health == shardside::SlotHealth::usable) return;
  const auto& from = shard(b.source_id);
  std::string what = health == shardside::SlotHealth::lost
                         ? " was invalidated: the source removed WAL that batch " + std::to_string(b.no) + " had not applied on " +
                               ctx_.target.name + " yet (max_slot_wal_keep_size = " +
                               src.query("SELECT current_setting('max_slot_wal_keep_size')")[0][0] + ")"
                         : " is gone (dropped outside shardctl)";
  throw locked_error("the replication slot " + name + " on " + from.name + what,
                     "`shardctl op resume " + ctx_.op_id + "` copies the batch again on a new stream (raise max_slot_wal_keep_size on " +
                         from.name + " if " + ctx_.target.name + " may fall that far behind again), or `shardctl op cancel " +
                         ctx_.op_id + "` gives the move up");
}

// One cut-over (online.hpp). Returns what was verified once flipped; none when it gave up
// (`why` says on what), with the batch's writers let through again.
std::optional<Runner::CutOver> Runner::try_cut_over(const Batch& b, std::string& why, CutOverVerify* verify) {
  const auto& s = *ctx_.online;
  auto window_start = clock::now();
  shardio::RawConn& src = source(b);
  std::string name = stream_name(b);
  auto deadline = clock::now() + std::chrono::milliseconds(s.cutover_timeout_ms);
  if (!shardside::lock_cutover(src, ctx_.op_id, b.no, s.cutover_timeout_ms)) {
    why = "writers let through by the previous try still held the batch's keys after " + std::to_string(s.cutover_timeout_ms) + " ms";
    return std::nullopt;
  }
  auto give_up = [&](std::string reason) -> std::optional<CutOver> {
    shardside::end_cutover(src, ctx_.op_id, b.no, false);
    shardside::unlock_cutover(src, ctx_.op_id, b.no);
    why = std::move(reason);
    return std::nullopt;
  };
  guard_batch(src, ctx_.space, guarded(), owner(), b.no, b.range, shardside::GuardState::cutover);
  std::string since = src.query("SELECT clock_timestamp()::text")[0][0];
  faults_.point("online.cutover", context(b));
  for (int sleep_ms = 1;; sleep_ms = std::min(sleep_ms * 2, 20)) {
    auto who = cut_over_waiters(src, since);
    if (who.empty()) break;
    if (ms_left(deadline) <= 0) return give_up("transactions older than the cut-over were still open: " + who);
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  }
  auto position = shardside::flushed_wal_position(src);
  auto applied = shardside::wait_applied(*target_, name, position, std::chrono::milliseconds(std::max(ms_left(deadline), 1)));
  if (applied.outcome != shardside::WaitOutcome::applied)
    return give_up(ctx_.target.name + " had not applied the source's changes up to " + shardside::format_lsn(position) +
                   " within the cut-over's time (" + std::string(shardside::to_text(applied.outcome)) + ")");
  std::string verified;
  {
    Stopwatch w(stats_.verify_seconds);
    if (verify) {
      catalog_.read([&](pqxx::work& tx) { fence(tx); });  // a process that lost its lease stops here
      auto window = verify->compare_changed(src, *target_);
      if (window.difference) {
        const auto& t = ctx_.tables[window.difference->table];
        give_up("the rows of keys changed during the stream differ");
        verification_failed(b, t, window.difference->on_source, window.difference->on_target,
                            "nothing was deleted and the map still routes the batch to " + shard(b.source_id).name +
                                "; compare the batch's rows on both shards, then `shardctl op resume " + ctx_.op_id + "`");
      }
      verified = window.verified.dump();
      faults_.point("verify", context(b));
    } else {
      verified = verify_at_cut_over(b);
    }
  }
  if (ms_left(deadline) < 0) return give_up("the verify of the batch took longer than the cut-over's time");
  sync_sequences(b);
  // Offline before the flip: a run killed between the two leaves the keys refused, not written
  // on a shard that is about to give them away.
  shardside::end_cutover(src, ctx_.op_id, b.no, true);
  faults_.point("online.offline", context(b));
  auto version = flip(b, verified, true);
  shardside::unlock_cutover(src, ctx_.op_id, b.no);
  auto held = std::chrono::duration<double, std::milli>(clock::now() - window_start).count();
  stats_.longest_cutover_ms = std::max(stats_.longest_cutover_ms, held);
  ++stats_.cutovers;
  if (verify) verify->forget();
  faults_.point("journal.flipped", context(b));
  return CutOver{verified, version};
}

// Drops the batch's subscription (on the target), slot and publication (on the source).
// Idempotent; a subscription is dropped without reaching the source.
void Runner::drop_stream(const Batch& b) {
  std::string name = stream_name(b);
  shardside::drop_subscription(*target_, name);
  unwatch_stream_keys(*target_, name, guarded());
  shardio::RawConn& src = source(b);
  shardside::drop_slot(src, name);
  shardside::drop_publication(src, name);
}

// What an interrupted start of the batch's stream left: its objects, and its rows on the target
// (a copy that committed before the run was killed). The source keeps no range of it.
void Runner::roll_back_stream(const Batch& b) {
  drop_stream(b);
  delete_from_target(b);
}

// Undoes a batch that is streaming or copied (`op cancel`): its stream, its rows on the target,
// a cut-over's range on the source; the batch journaled planned again. Idempotent.
void Runner::roll_back_online(const Batch& b) {
  roll_back_stream(b);
  faults_.point("rollback.target", context(b));
  shardio::RawConn& src = source(b);
  // A range in cutover, or offline: a cut-over that ended but did not flip (killed between).
  if (shardside::has_guard_table(src)) shardside::delete_batch_range(src, ctx_.op_id, b.no);
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    tx.exec_params("UPDATE shardctl.op_batches SET step = 'planned', rows_moved = 0, updated_at = now() "
                   "WHERE op_id = $1 AND batch_no = $2",
                   ctx_.op_id, b.no);
  });
  faults_.point("rollback.mapping", context(b));
}

}  // namespace shardctl::migrate
