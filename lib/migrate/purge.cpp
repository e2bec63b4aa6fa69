// Runner's purge step: a flipped batch's rows deleted from its source, children first, and its
// guard turned into a fence, in one source transaction held to what was verified.
//
// Each table's rows are digested, then deleted, in one REPEATABLE READ snapshot: the DELETE
// sees exactly the rows the digest saw (a row another transaction changed since is a
// serialization failure, never skipped), so its count equal to the digest's proves it deleted
// those rows and no other. The digest is the one the flip journaled: the source's server
// aggregates it where the verify left a server digest (server_digest.hpp), else the rows
// stream to shardctl as the copy streamed them. Reading the rows before the DELETE costs less
// than `DELETE ... RETURNING` them: RETURNING fetches every deleted row again and projects it
// (bench/README.md, "moves on a scattered heap").
//
// Where a second session to the source is free (the purge at the end of a run, or of a group
// that cannot wait), it takes the digests while this one deletes: it imports the purge's
// snapshot (pg_export_snapshot, SET TRANSACTION SNAPSHOT), so it reads exactly the rows the
// DELETEs see, and each DELETE's count is compared with its digest before the COMMIT. The
// DELETE runs on one core; the digests took a fifth of the purge beside it, serially.
//
// On the fast path (no RI trigger fires: the parents' rows wait for no child's), that second
// session also deletes: the purge splits into two transactions in that one snapshot, the
// children's tables on the first session (a prefix of the children-first order, chosen so that
// both sessions end at about the same time, split_at) and the parents' on the second, after the
// digests. Each transaction passes the guard by its own row in shardctl.guard_bypass. When every
// count matches, the first commits, then the second, which also turns the ranges into fences.
// Between the two commits the source holds parents without their children, which no foreign
// key forbids; a crash there leaves the batches offline, and the resumed purge finds the
// children's tables already without rows in the batches' keys: a table with no row left to
// delete is taken as purged (deleting nothing cannot delete an unverified row), the others are
// held to their digests as always. In the bench this took the purge of 4.1M rows from 3.7 to
// 3.3 s (bench/README.md, "moves on a scattered heap").
//
// The transaction that turns the ranges into fences (the only one, or the second of a split
// purge, which commits last) also raises the source's route floor for the map to the highest
// flip version of its batches (guard.hpp): both commit, or neither. A kill before that commit
// (the boundaries journal.flipped and, split, purge.children) leaves the batches flipped, not
// fenced, their floor not raised, and the resumed purge does both; a kill after it (purge)
// finds them fenced, their floor raised (crash_points.inc checks it after every chain). The
// floor's raises on a shard are serialized by a session lock taken before the purge's snapshot
// (shardside::lock_route_floor): under REPEATABLE READ, the raise of a purge whose snapshot is
// older than another purge's raise of the same map would be a serialization failure.
#include <atomic>
#include <future>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "migrate/copy_sql.hpp"
#include "migrate/purge_split.hpp"
#include "migrate/runner.hpp"
#include "migrate/server_digest.hpp"
#include "shardside/guard.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/value_digest.hpp"

namespace shardctl::migrate {

// What the purge of one table is held to, from the flip's journal: the digest the verify
// compared (absent in operations journaled before the purge was held to the verify), and the
// server digest the source computes alike, where the verify left one.
struct Runner::PurgeCheck {
  std::string journaled;
  std::string server;

  PurgeCheck(const nlohmann::json& verified, const std::string& table) {
    if (verified.contains(table)) journaled = verified[table].get<std::string>();
    if (verified.contains(journaled_server_digests) && verified[journaled_server_digests].contains(table))
      server = verified[journaled_server_digests][table].get<std::string>();
  }
  bool empty() const { return journaled.empty() && server.empty(); }
};

bool Runner::server_digested(const Flipped& f) const {
  if (f.verified.empty()) return false;
  auto verified = nlohmann::json::parse(f.verified);
  for (const auto& t : ctx_.tables)
    if (!server_digest_of(PurgeCheck(verified, t.name).server)) return false;
  return true;
}

// Deletes the group's rows from the source, children first, and turns its batches' guards into
// fences, in one source transaction. A batch already fenced was purged by an earlier run.
void Runner::purge(const PurgeGroup& group) {
  shardio::RawConn& src = source(group.front().batch);
  auto purged = purge_rows(src, group, &purger(group.front().batch));
  if (!purged.batches.empty()) purge_commit(src, purged);
}

void Runner::raise_floor(shardio::RawConn& conn, const std::vector<const Flipped*>& batches) const {
  std::int64_t version = 0;
  for (const auto* f : batches) {
    if (!f->batch.flip_version)
      throw internal_error("batch " + std::to_string(f->batch.no) + " of operation " + ctx_.op_id + " is purged without a flip version");
    version = std::max(version, *f->batch.flip_version);
  }
  shardside::raise_route_floor(conn, ctx_.map.id, ctx_.map.name, version, ctx_.op_id, ctx_.target.name);
}

// Lets the floor lock go where a purge did not reach its commit; a session whose transaction
// failed cannot run it, and its lock goes with the session (the run ends on that error).
void Runner::unlock_floor(shardio::RawConn& src) const {
  try {
    if (src.query("SELECT pg_current_xact_id_if_assigned() IS NULL")[0][0] == "t") shardside::unlock_route_floor(src, ctx_.map.id);
  } catch (const Error&) {  // the first error says why
  }
}

// Touches only `src`, `second` and the run's read-only context, so it may run on another
// thread (PurgeBeside, runner.cpp, with no second session) while this one copies, verifies and
// flips the next batch.
Runner::OpenPurge Runner::purge_rows(shardio::RawConn& src, const PurgeGroup& group, shardio::RawConn* second) const {
  std::vector<const Flipped*> todo;
  for (const auto& f : group) {
    switch (purge_from(batch_guard_state(src, ctx_.op_id, f.batch.no))) {
      case PurgeFrom::nothing: continue;
      case PurgeFrom::guard_again: guard_batch(src, ctx_.space, guarded(), owner(), f.batch.no, f.batch.range); break;
      case PurgeFrom::purge: break;
    }
    todo.push_back(&f);
  }
  if (todo.empty()) return {};
  // The route floor's table and functions of this version (a run resumed by a newer shardctl).
  if (!shardside::guard_is_current(src))
    guard_batch(src, ctx_.space, guarded(), owner(), todo.front()->batch.no, todo.front()->batch.range, std::nullopt);
  shardside::lock_route_floor(src, ctx_.map.id);
  try {
    return purge_locked(src, todo, second);
  } catch (...) {
    unlock_floor(src);
    throw;
  }
}

// purge_rows once the batches to purge are known and the floor lock is held.
Runner::OpenPurge Runner::purge_locked(shardio::RawConn& src, const std::vector<const Flipped*>& todo,
                                       shardio::RawConn* second) const {
  // Runs of batches whose keys follow each other: one DELETE per table and run (a batch an
  // earlier run purged splits a group).
  std::vector<PurgeRun> runs;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const Flipped* f = todo[i];
    bool next = i > 0 && todo[i - 1] + 1 == f;  // the group's batches follow each other
    if (!next) runs.emplace_back();
    runs.back().emplace_back(f, f->verified.empty() ? nlohmann::json::object() : nlohmann::json::parse(f->verified));
  }
  std::vector<PurgeStep> steps;  // children first
  for (auto it = ctx_.tables.rbegin(); it != ctx_.tables.rend(); ++it)
    for (const auto& run : runs) {
      routing::KeyRange keys{run.front().first->batch.range.low, run.back().first->batch.range.high};
      steps.push_back({&*it, &run, keys, filter(src, *it, keys)});
    }
  std::size_t split = second ? split_at(src, steps) : steps.size();
  bool splits = split < steps.size();
  // One snapshot for every digest and DELETE of the group (see the top of this file).
  src.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
  // The fast path: the parents' RI triggers are skipped (children go first, and nothing outside
  // the moving set references them); the guard's triggers still fire.
  if (ctx_.path.skip_purge_checks) src.exec("SET LOCAL session_replication_role = replica");
  for (const auto* f : todo) {
    if (splits) shardside::add_batch_bypass(src, ctx_.op_id, f->batch.no);
    else bypass_batch_guard(src, ctx_.op_id, f->batch.no);
  }
  if (second) {
    delete_beside_digests(src, *second, steps, split, todo);
  } else {
    for (const auto& s : steps) {
      auto digested = digest_run(src, *s.table, *s.run, s.where);  // before its rows go
      check_deleted(src, s, delete_rows(src, s), digested);
    }
  }
  if (splits) return {todo, second};  // its transaction fenced them
  for (const auto* f : todo) fence_batch(src, ctx_.op_id, f->batch.no, ctx_.fence_grace);
  raise_floor(src, todo);
  return {todo, nullptr};
}

// The purge splits on the fast path only (an RI trigger of a parent's DELETE would wait for the
// children's transaction, which waits for it to commit), over a current guard (guard_bypass),
// with the rows of every step journaled; purge_split.hpp decides where.
std::size_t Runner::split_at(shardio::RawConn& src, const std::vector<PurgeStep>& steps) const {
  if (!ctx_.path.skip_purge_checks || steps.size() < 2) return steps.size();
  std::vector<PurgeStepSize> sizes;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    PurgeStepSize size{0, i == 0 || steps[i].table != steps[i - 1].table};
    for (const auto& [f, journal] : *steps[i].run) {
      PurgeCheck check(journal, steps[i].table->name);
      if (check.empty()) return steps.size();
      size.rows += static_cast<double>(journaled_rows(check.server.empty() ? check.journaled : check.server));
    }
    sizes.push_back(size);
  }
  std::size_t best = purge_split_at(sizes);
  if (best < steps.size() && !shardside::guard_is_current(src)) return steps.size();
  return best;
}

// The steps' digests on `second`, in the purge's snapshot, while `src` deletes (see the top of
// this file); where the purge splits (`split` < steps.size()), `second` then deletes the steps
// from `split` on in a transaction of its own and turns the batches into fences, and stays open
// for purge_commit. A digest that refuses rolls both sessions back; so does a DELETE that fails.
void Runner::delete_beside_digests(shardio::RawConn& src, shardio::RawConn& second, const std::vector<PurgeStep>& steps,
                                   std::size_t split, const std::vector<const Flipped*>& todo) const {
  bool splits = split < steps.size();
  std::string snapshot = src.query("SELECT pg_export_snapshot()")[0][0];
  second.exec(splits ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  second.exec("SET TRANSACTION SNAPSHOT " + second.literal(snapshot));
  // One process for the digests: parallel workers would take the cores the DELETEs run on
  // (measured: the split purge of 4.1M rows 3.16 -> 2.76 s, bench/README.md, "moves on a scattered heap").
  second.exec("SET LOCAL max_parallel_workers_per_gather = 0");
  if (splits) {
    second.exec("SET LOCAL session_replication_role = replica");
    for (const auto* f : todo) shardside::add_batch_bypass(second, ctx_.op_id, f->batch.no);
  }
  std::vector<std::promise<std::optional<std::int64_t>>> digests(steps.size());
  std::vector<std::future<std::optional<std::int64_t>>> digested;
  for (auto& d : digests) digested.push_back(d.get_future());
  std::vector<std::int64_t> deleted(steps.size(), 0);
  std::atomic<bool> stop{false};
  // Joined (its future's destructor waits) before `digests` goes, also when a DELETE throws.
  // Its error after the digests (a DELETE of the second session) is the future's.
  auto beside = std::async(std::launch::async, [&] {
    std::size_t i = 0;
    try {
      for (; i < steps.size(); ++i) digests[i].set_value(digest_run(second, *steps[i].table, *steps[i].run, steps[i].where));
      if (!splits) {
        second.exec("COMMIT");
        return;
      }
      for (std::size_t j = split; j < steps.size() && !stop; ++j) deleted[j] = delete_rows(second, steps[j]);
    } catch (...) {
      for (std::size_t j = i; j < steps.size(); ++j) digests[j].set_exception(std::current_exception());
      if (splits) {
        if (i == steps.size()) throw;  // a DELETE's error; roll_back_second() ends the transaction
        return;
      }
      try {
        second.exec("ROLLBACK");
      } catch (const Error&) {  // a lost session keeps nothing; the first error says why
      }
    }
  });
  auto roll_back_second = [&] {
    stop = true;
    if (beside.valid()) beside.wait();
    if (!splits) return;
    try {
      second.exec("ROLLBACK");
    } catch (const Error&) {  // a lost session keeps nothing; the first error says why
    }
  };
  try {
    for (std::size_t i = 0; i < split; ++i) {
      std::int64_t n = delete_rows(src, steps[i]);
      std::optional<std::int64_t> want;
      try {
        want = digested[i].get();
      } catch (...) {
        src.exec("ROLLBACK");
        throw;
      }
      check_deleted(src, steps[i], n, want);
    }
    if (!splits) return;
    try {
      beside.get();
    } catch (...) {
      src.exec("ROLLBACK");
      throw;
    }
    for (std::size_t j = split; j < steps.size(); ++j) check_deleted(src, steps[j], deleted[j], digested[j].get());
    for (const auto* f : todo) fence_batch(second, ctx_.op_id, f->batch.no, ctx_.fence_grace);
    raise_floor(second, todo);
  } catch (...) {
    roll_back_second();
    throw;
  }
}

// One step's rows deleted; how many.
std::int64_t Runner::delete_rows(shardio::RawConn& src, const PurgeStep& step) const {
  return src.command("DELETE FROM " + step.table->quoted + " WHERE " + step.where);
}

void Runner::check_deleted(shardio::RawConn& src, const PurgeStep& step, std::int64_t deleted,
                           std::optional<std::int64_t> digested) const {
  if (digested && deleted != *digested)
    refuse_purge(src, *step.table, step.keys,
                 "deleted " + std::to_string(deleted) + " rows where its snapshot held the " + std::to_string(*digested) +
                     " verified ones",
                 "a trigger or rule of the table kept rows from being deleted");
}

// The run's rows of the table digested in the purge's snapshot and compared with what the
// flips journaled; the rows counted, or none when nothing was journaled (operations journaled
// before the purge was held to the verify). A run of several batches (each with a server digest
// of every table, room_for()) is aggregated once over all its keys and compared with the sum of
// its batches' digests (value digests add up); where that differs, each batch decides alone.
std::optional<std::int64_t> Runner::digest_run(shardio::RawConn& src, const PlannedTable& t, const PurgeRun& run,
                                               const std::string& where) const {
  std::vector<PurgeCheck> checks;
  for (const auto& [f, journal] : run) checks.emplace_back(journal, t.name);
  if (run.size() == 1) {
    if (checks[0].empty()) return std::nullopt;
    return digest_to_purge(src, t, run[0].first->batch.range, where, checks[0]);
  }
  auto how = server_digest_of(checks[0].server);
  std::string want(untagged(checks[0].server));
  bool alike = how.has_value();
  for (std::size_t i = 1; alike && i < checks.size(); ++i) {
    alike = server_digest_of(checks[i].server) == how;
    if (alike) want = shardio::add_value_digests(want, std::string(untagged(checks[i].server)));
  }
  if (alike) {
    want = tagged_digest(*how, want);
    auto got = src.query("SELECT " + server_digest_select(t, *how) + " FROM (SELECT " + column_list(t.columns) + " FROM " + t.quoted +
                         " WHERE " + where + ") " + shardio::row_alias)[0][0];
    if (got == want || journaled_rows(got) == 0) return journaled_rows(got);  // none left: purged (top of file)
  }
  std::int64_t rows = 0;
  for (std::size_t i = 0; i < run.size(); ++i) {
    const auto& range = run[i].first->batch.range;
    if (checks[i].empty()) throw internal_error("batch " + routing::format_range(range) + " joined a purge without a digest");
    rows += digest_to_purge(src, t, range, filter(src, t, range), checks[i]);
  }
  return rows;
}

// The table's batch digested as the flip journaled it, in the purge's snapshot, and compared;
// returns the rows it counted.
std::int64_t Runner::digest_to_purge(shardio::RawConn& src, const PlannedTable& t, const routing::KeyRange& keys,
                                     const std::string& where, const PurgeCheck& check) const {
  auto rows_sql = "SELECT " + column_list(t.columns) + " FROM " + t.quoted + " WHERE " + where;
  auto server = [&](ServerDigest how) {
    return src.query("SELECT " + server_digest_select(t, how) + " FROM (" + rows_sql + ") " + shardio::row_alias)[0][0];
  };
  if (!check.server.empty()) {
    auto got = server(*server_digest_of(check.server));
    if (got == check.server || journaled_rows(got) == 0) return journaled_rows(got);  // none left: purged (top of file)
    // The source's server hashed otherwise than shardctl did over the stream (something the
    // verify's probes did not see): the stream's digest decides, as it did before.
    if (!shardio::is_copy_digest(check.journaled)) refuse_digest(src, t, keys, got, check.server);
  }
  const auto& want = check.journaled;
  std::string got;
  if (auto how = server_digest_of(want)) {
    got = server(*how);  // digested by both servers at an online cut-over
  } else if (shardio::is_copy_digest(want)) {
    // The rows stream out and are hashed as the copy hashed them.
    bool binary = want.find(":xxh3t:") == std::string::npos;
    shardio::CopyDigest digest(binary);
    shardio::copy_out_to(src, "COPY (" + rows_sql + ") TO STDOUT" + copy_format(binary), [&](std::string_view chunk) { digest.add(chunk); });
    got = digest.text();
  } else {
    got = src.query("SELECT count(*) || ':' || " + shardio::row_hash_sum() + " FROM (" + rows_sql + ") " + shardio::row_alias)[0][0];
  }
  if (got != want && journaled_rows(got) != 0) refuse_digest(src, t, keys, got, want);  // none left: purged (top of file)
  return journaled_rows(got);
}

void Runner::refuse_digest(shardio::RawConn& src, const PlannedTable& t, const routing::KeyRange& keys, const std::string& got,
                           const std::string& want) const {
  refuse_purge(src, t, keys, "would delete count:checksum " + got + " where " + want + " was verified",
               "a write reached the batch's keys past the guard");
}

// Rolls the purge back and fails: the batch stays guarded on its source, served by the target.
void Runner::refuse_purge(shardio::RawConn& src, const PlannedTable& t, const routing::KeyRange& keys, const std::string& what,
                          const std::string& why) const {
  src.exec("ROLLBACK");
  throw internal_error("purge of " + t.name + " keys " + routing::format_range(keys) + " on " + src.role() + " " + what +
                           "; rolled back: " + why,
                       "those keys are served by " + ctx_.target.name + " and stay guarded on " + src.role() +
                           "; compare their rows on both shards, then `shardctl op resume ID`");
}

// Commits a purge once this process still holds the operation: a runner that lost its lease
// must not delete what another may be handling.
// A split purge commits the children's transaction first (see the top of this file).
void Runner::purge_commit(shardio::RawConn& src, const OpenPurge& purged) {
  try {
    catalog_.read([&](pqxx::work& tx) { fence(tx); });
    src.exec("COMMIT");
  } catch (...) {
    if (purged.parents) try {
        purged.parents->exec("ROLLBACK");
      } catch (const Error&) {  // a lost session keeps nothing; the first error says why
      }
    unlock_floor(src);
    throw;
  }
  if (purged.parents) {
    faults_.point("purge.children", context(purged.batches.front()->batch));
    try {
      purged.parents->exec("COMMIT");
    } catch (...) {
      unlock_floor(src);
      throw;
    }
  }
  shardside::unlock_route_floor(src, ctx_.map.id);
  for (const auto* f : purged.batches) faults_.point("purge", context(f->batch));
}

}  // namespace shardctl::migrate
