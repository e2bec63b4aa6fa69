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
// (bench/README.md, issue 32).
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "migrate/copy_sql.hpp"
#include "migrate/runner.hpp"
#include "migrate/server_digest.hpp"
#include "shardio/row_checksum.hpp"

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

// Deletes the moved rows from the source, children first, and turns the batch's guard into a
// fence, in one source transaction. A batch already fenced was purged by an earlier run.
void Runner::purge(const Batch& b, const std::string& verified) {
  shardio::RawConn& src = source(b);
  if (purge_rows(src, b, verified)) purge_commit(src, b);
}

// The purge up to its COMMIT; false when an earlier run purged the batch (nothing to commit).
// Touches only `src` and the run's read-only context, so it may run on another thread
// (verify_flip_beside_purge) while this one verifies the next batch.
bool Runner::purge_rows(shardio::RawConn& src, const Batch& b, const std::string& verified) const {
  switch (purge_from(batch_guard_state(src, ctx_.op_id, b.no))) {
    case PurgeFrom::nothing: return false;
    case PurgeFrom::guard_again: guard_batch(src, ctx_.space, guarded(), owner(), b.no, b.range); break;
    case PurgeFrom::purge: break;
  }
  nlohmann::json expected = verified.empty() ? nlohmann::json::object() : nlohmann::json::parse(verified);
  // One snapshot for every digest and DELETE of the batch (see the top of this file).
  src.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
  // The fast path: the parents' RI triggers are skipped (children go first, and nothing outside
  // the moving set references them); the guard's triggers still fire.
  if (ctx_.path.skip_purge_checks) src.exec("SET LOCAL session_replication_role = replica");
  bypass_batch_guard(src, ctx_.op_id, b.no);
  for (auto it = ctx_.tables.rbegin(); it != ctx_.tables.rend(); ++it) purge_table(src, *it, b, PurgeCheck(expected, it->name));
  fence_batch(src, ctx_.op_id, b.no, ctx_.fence_grace);
  return true;
}

// One table's rows of the batch: digested and compared, then deleted and counted.
void Runner::purge_table(shardio::RawConn& src, const PlannedTable& t, const Batch& b, const PurgeCheck& check) const {
  std::string where = filter(src, t, b.range);
  std::optional<std::int64_t> digested;
  if (!check.empty()) digested = digest_to_purge(src, t, b, where, check);
  auto deleted = src.command("DELETE FROM " + t.quoted + " WHERE " + where);
  if (digested && deleted != *digested)
    refuse_purge(src, t, b,
                 "deleted " + std::to_string(deleted) + " rows where its snapshot held the " + std::to_string(*digested) +
                     " verified ones",
                 "a trigger or rule of the table kept rows from being deleted");
}

// The table's batch digested as the flip journaled it, in the purge's snapshot, and compared;
// returns the rows it counted.
std::int64_t Runner::digest_to_purge(shardio::RawConn& src, const PlannedTable& t, const Batch& b, const std::string& where,
                                     const PurgeCheck& check) const {
  auto rows_sql = "SELECT " + column_list(t.columns) + " FROM " + t.quoted + " WHERE " + where;
  auto server = [&](ServerDigest how) {
    return src.query("SELECT " + server_digest_select(t, how) + " FROM (" + rows_sql + ") " + shardio::row_alias)[0][0];
  };
  if (!check.server.empty()) {
    auto got = server(*server_digest_of(check.server));
    if (got == check.server) return journaled_rows(got);
    // The source's server hashed otherwise than shardctl did over the stream (something the
    // verify's probes did not see): the stream's digest decides, as it did before.
    if (!shardio::is_copy_digest(check.journaled)) refuse_digest(src, t, b, got, check.server);
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
  if (got != want) refuse_digest(src, t, b, got, want);
  return journaled_rows(got);
}

void Runner::refuse_digest(shardio::RawConn& src, const PlannedTable& t, const Batch& b, const std::string& got,
                           const std::string& want) const {
  refuse_purge(src, t, b, "would delete count:checksum " + got + " where " + want + " was verified",
               "a write reached the batch's keys past the guard");
}

// Rolls the purge back and fails: the batch stays guarded on its source, served by the target.
void Runner::refuse_purge(shardio::RawConn& src, const PlannedTable& t, const Batch& b, const std::string& what,
                          const std::string& why) const {
  src.exec("ROLLBACK");
  throw internal_error("purge of " + t.name + " batch " + routing::format_range(b.range) + " on " + shard(b.source_id).name + " " +
                           what + "; rolled back: " + why,
                       "the batch is served by " + ctx_.target.name + " and stays guarded on " + shard(b.source_id).name +
                           "; compare its rows on both shards, then `shardctl op resume ID`");
}

// Commits a purge once this process still holds the operation: a runner that lost its lease
// must not delete what another may be handling.
void Runner::purge_commit(shardio::RawConn& src, const Batch& b) {
  catalog_.read([&](pqxx::work& tx) { fence(tx); });
  src.exec("COMMIT");
  faults_.point("purge", context(b));
}

}  // namespace shardctl::migrate
