#include "schema/runner.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "pg/sqlstate.hpp"
#include "schema/history.hpp"
#include "schema/indexes.hpp"
#include "schema/lock.hpp"
#include "schema/statements.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::schema {
namespace {

using Clock = std::chrono::steady_clock;
using shardside::SchemaHistoryKind;
using Outcome = shardside::SchemaHistoryOutcome;

std::int64_t ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

struct ResultClear {
  void operator()(PGresult* r) const noexcept { PQclear(r); }
};

// What the server said about a failed migration statement.
struct SqlFailure {
  std::string sqlstate;
  std::string message;
  std::string detail;
  std::string hint;
  std::size_t position = 0;  // 1-based character in the text sent; 0 when not given
  bool connection_lost = false;
};

std::string field(PGresult* r, int code) {
  const char* v = PQresultErrorField(r, code);
  return v ? v : "";
}

// Runs migration SQL (one or more statements) as is. nullopt on success.
std::optional<SqlFailure> run_sql(shardio::RawConn& conn, const std::string& sql) {
  std::unique_ptr<PGresult, ResultClear> r(PQexec(conn.get(), sql.c_str()));
  auto status = PQresultStatus(r.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY) return std::nullopt;
  SqlFailure f;
  f.sqlstate = field(r.get(), PG_DIAG_SQLSTATE);
  f.message = field(r.get(), PG_DIAG_MESSAGE_PRIMARY);
  f.detail = field(r.get(), PG_DIAG_MESSAGE_DETAIL);
  f.hint = field(r.get(), PG_DIAG_MESSAGE_HINT);
  auto pos = field(r.get(), PG_DIAG_STATEMENT_POSITION);
  if (!pos.empty()) f.position = std::stoul(pos);
  if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT) {
    f.message = "COPY from or to the client is not supported in a migration file";
    // Leave the copy state: the connection is dropped by the caller's error path anyway.
  }
  if (f.message.empty()) {
    std::string m = PQerrorMessage(conn.get());
    auto nl = m.find('\n');
    f.message = nl == std::string::npos ? m : m.substr(0, nl);
  }
  f.connection_lost = PQstatus(conn.get()) != CONNECTION_OK || f.sqlstate.empty() ||
                      pg::sqlstate::connection_lost(f.sqlstate);
  return f;
}

// "V3__x.sql:12:5: message" (position known) or "V3__x.sql: message". `one_statement`: the
// text sent was one statement starting at `statement_offset` of the file.
std::string locate(const Migration& m, std::size_t statement_offset, const std::string& statement, const SqlFailure& f,
                   bool one_statement = false) {
  std::string out = m.file;
  if (f.position) {
    auto [line, col] = line_col(m.sql, statement_offset + byte_offset_of_char(statement, f.position));
    out += ":" + std::to_string(line) + ":" + std::to_string(col);
  } else if (one_statement) {
    // A no-transaction file: the failing statement is known even when the server gives no position.
    auto [line, col] = line_col(m.sql, statement_offset);
    out += ":" + std::to_string(line) + ":" + std::to_string(col);
  }
  out += ": ";
  out += f.message;
  return out;
}

std::string server_hint(const SqlFailure& f) {
  std::string out;
  if (!f.detail.empty()) out += f.detail;
  if (!f.hint.empty()) out += (out.empty() ? "" : " ") + f.hint;
  if (f.message.find("cannot run inside a transaction block") != std::string::npos)
    out += std::string(out.empty() ? "" : " ") + "make `-- shardctl:no-transaction` the file's first line to run it outside a transaction";
  return out;
}

// The session a file starts in, in one round trip (with `then`, e.g. BEGIN, after it).
void prepare_session(shardio::RawConn& conn, const RunSettings& s, const std::string& then = {}) {
  // A file's own SETs (search_path, role) must not leak into the next file: start each from
  // the session defaults, then the rollout's timeouts. Files are checked with PostgreSQL's
  // lexing rules as they are by default (standard strings): a database or role default of off
  // would let the server read statements the check did not see (a backslash before a quote).
  // The values are numbers shardctl formats.
  conn.script("RESET ALL; SET standard_conforming_strings = on; SET lock_timeout = " + std::to_string(s.lock_timeout.count()) +
              "; SET statement_timeout = " + std::to_string(s.statement_timeout.count()) + (then.empty() ? "" : "; " + then));
}

NewRow row_for(const Migration& m, std::int64_t ms, Outcome outcome) {
  NewRow r;
  if (m.version) r.version = m.version->text();
  r.name = m.file;
  r.kind = history_kind(m.kind);
  r.checksum = m.checksum;
  r.duration_ms = ms;
  r.outcome = outcome;
  return r;
}

// Why one file failed; thrown out of run_file to the shard's catch.
struct FileFailed {
  FileRunState state;  // failed | locked | unreachable
  std::string error;
  std::string hint;
  std::vector<InvalidIndex> invalid;  // INVALID indexes found where the file's indexes should be
};

std::string index_list(const std::vector<InvalidIndex>& invalid) {
  std::string out;
  for (std::size_t i = 0; i < invalid.size(); ++i) out += (i ? ", " : "") + invalid[i].index + " on " + invalid[i].table;
  return out;
}

// After the file's statements succeeded: an index it creates that is INVALID means the file did
// not do what it says (CREATE INDEX ... IF NOT EXISTS kept the INVALID index an earlier failed
// build left), so it fails.
std::optional<FileFailed> invalid_after(shardio::RawConn& conn, const Migration& m, std::int64_t ms, FileResult& result) {
  // Only a statement that can succeed and leave its index INVALID needs the look (a catalog
  // query that a fresh backend pays a few milliseconds for, on every shard).
  auto splits = split_statements(m.sql);
  bool may = std::any_of(splits.begin(), splits.end(), [](const auto& st) {
    auto ix = created_index(st);
    return ix && ix->may_stay_invalid;
  });
  if (!may) return std::nullopt;
  auto invalid = invalid_file_indexes(conn, {m});
  if (invalid.empty()) return std::nullopt;
  result.duration_ms = ms;
  result.error = m.file + ": index " + index_list(invalid) + " that it creates is INVALID (an earlier CREATE INDEX "
                 "CONCURRENTLY failed, and the file kept that index)";
  return FileFailed{FileRunState::failed, result.error, "drop it (the DROP is listed), then run apply again", invalid};
}

void rollback_quietly(shardio::RawConn& conn) {
  std::unique_ptr<PGresult, ResultClear> r(PQexec(conn.get(), "ROLLBACK"));
}

// A file in a transaction of its own, its history row written inside it. A failure rolls it
// back and records the failure, except a lock wait that timed out, which changed nothing.
void run_in_transaction(shardio::RawConn& conn, const Migration& m, Clock::time_point t0, FileResult& result) {
  if (auto f = run_sql(conn, m.sql)) {
    result.duration_ms = ms_since(t0);
    result.error = locate(m, 0, m.sql, *f);
    if (f->connection_lost) throw FileFailed{FileRunState::unreachable, result.error, "the file's transaction was rolled back", {}};
    rollback_quietly(conn);
    // A lock wait that timed out changed nothing: no failure to record, try again later.
    if (f->sqlstate == pg::sqlstate::lock_not_available)
      throw FileFailed{FileRunState::locked, result.error, "another session holds a lock the migration needs; try again later (or raise --lock-timeout)", {}};
    insert_history(conn, row_for(m, result.duration_ms, Outcome::failed));
    throw FileFailed{FileRunState::failed, result.error, server_hint(*f), {}};
  }
  if (auto bad = invalid_after(conn, m, ms_since(t0), result)) {
    rollback_quietly(conn);
    insert_history(conn, row_for(m, result.duration_ms, Outcome::failed));
    throw *bad;
  }
  result.duration_ms = ms_since(t0);
  insert_history(conn, row_for(m, result.duration_ms, Outcome::succeeded));
  if (auto f = run_sql(conn, "COMMIT")) {
    // A deferred constraint refused at commit: the file failed.
    result.error = locate(m, 0, m.sql, SqlFailure{f->sqlstate, f->message, f->detail, f->hint, 0, f->connection_lost});
    if (f->connection_lost) throw FileFailed{FileRunState::unreachable, result.error, "the commit's outcome is unknown; `shardctl schema status` shows it", {}};
    rollback_quietly(conn);
    insert_history(conn, row_for(m, result.duration_ms, Outcome::failed));
    throw FileFailed{FileRunState::failed, result.error, server_hint(*f), {}};
  }
}

// A no-transaction file: statement by statement, each committed on its own. Its row says
// "started" (success NULL) before the first statement, and how it ended after the last one: a
// run killed in between leaves the row unfinished, and the next run stops there instead of
// running statements again whose effects nobody knows.
void run_statement_by_statement(shardio::RawConn& conn, const Migration& m, Clock::time_point t0, FileResult& result) {
  auto id = insert_history(conn, row_for(m, 0, Outcome::unfinished));
  for (const auto& st : split_statements(m.sql)) {
    if (auto f = run_sql(conn, st.sql)) {
      result.duration_ms = ms_since(t0);
      result.error = locate(m, st.offset, st.sql, *f, true);
      // The statement's outcome is unknown: the row stays unfinished.
      if (f->connection_lost) throw FileFailed{FileRunState::unreachable, result.error,
                         "statements before it are committed, and the file stays recorded as started: the next apply "
                         "stops there and says how to record what it did", {}};
      finish_history(conn, id, false, result.duration_ms);
      throw FileFailed{FileRunState::failed, result.error, server_hint(*f), {}};
    }
  }
  if (auto bad = invalid_after(conn, m, ms_since(t0), result)) {
    finish_history(conn, id, false, result.duration_ms);
    throw *bad;
  }
  result.duration_ms = ms_since(t0);
  finish_history(conn, id, true, result.duration_ms);
}

// Runs one file and writes its history row. Throws FileFailed.
void run_file(shardio::RawConn& conn, const Migration& m, const RunSettings& settings, FileResult& result) {
  // A file in a transaction begins it in the same round trip as its session.
  prepare_session(conn, settings, m.no_transaction ? "" : "BEGIN");
  auto t0 = Clock::now();
  if (m.no_transaction) run_statement_by_statement(conn, m, t0, result);
  else run_in_transaction(conn, m, t0, result);
}

// Every INVALID index of the shard, each named with the file that creates an index of its name
// where one does.
std::vector<InvalidIndex> all_invalid_indexes(shardio::RawConn& conn, const std::vector<Migration>& migrations) {
  auto all = invalid_indexes(conn);
  auto owned = invalid_file_indexes(conn, migrations);
  for (auto& ix : all)
    for (const auto& o : owned)
      if (o.index == ix.index) ix.file = o.file;
  return all;
}

std::string started_message(const Started& st) {
  return st.file + " started at " + st.at + " (by " + st.by + ") and never finished: its run was interrupted, so what " +
         "its statements did is not known; nothing ran on this shard";
}

std::string started_hint(const Started& st, const std::string& shard, const std::string& directory) {
  return "check what " + st.file + " did on shard " + shard + " (an INVALID index it left is listed below), then record " +
         "it: `shardctl schema repair " + directory + " --shards " + shard + " --mark-applied " + st.file +
         "` if all of it took effect, or `--mark-failed " + st.file + "` to have the next apply run it again (after " +
         "undoing what it did)";
}

// Fills the report from an Error thrown around the shard's work.
void fail_report(ShardReport& rep, const Error& e) {
  rep.state = refused_for_connections(e)           ? ShardState::refused
              : e.kind() == ErrorKind::unavailable ? ShardState::unreachable
              : e.kind() == ErrorKind::locked    ? ShardState::locked
                                                 : ShardState::failed;
  rep.error = e.what();
  rep.hint = e.hint();
}

// The shard's plan, made again from its history under the lock (the survey's may be stale),
// and what the report says of it. An applied file edited since refuses the shard.
ShardPlan plan_under_lock(shardio::RawConn& conn, const std::vector<Migration>& migrations, const std::string& shard,
                          ShardReport& rep) {
  auto plan = plan_shard(migrations, read_history(conn));
  if (plan.current) rep.version_before = plan.current->text();
  rep.version_after = rep.version_before;
  for (auto i : plan.pending) rep.planned.push_back(migrations[i].file);
  if (!plan.changed.empty())
    throw data_error(plan.changed.front().file + " was changed after it was applied on shard " + shard,
                     "never edit an applied migration; add a new V<next>__ file instead");
  return plan;
}

// A file started there and never finished: nothing runs. Under the lock, so the run that
// started it is gone (with its backend, which held the lock).
void stop_at_started(shardio::RawConn& conn, const std::vector<Migration>& migrations, const Started& started,
                     const std::string& shard, const std::string& directory, ShardReport& rep) {
  rep.state = ShardState::failed;
  rep.error = started_message(started);
  rep.hint = started_hint(started, shard, directory);
  rep.invalid_indexes = all_invalid_indexes(conn, migrations);
  release_rollout_lock(conn);
}

ShardState shard_state_after(FileRunState failure) noexcept {
  switch (failure) {
    case FileRunState::applied: return ShardState::ok;
    case FileRunState::failed: return ShardState::failed;
    case FileRunState::locked: return ShardState::locked;
    case FileRunState::unreachable: return ShardState::unreachable;
  }
  return ShardState::failed;
}

// A file failed: the report says so, with the INVALID indexes that explain it.
void report_file_failure(shardio::RawConn& conn, const Migration& m, const FileFailed& f, FileResult& fr, ShardReport& rep) {
  fr.state = f.state;
  fr.error = f.error;
  rep.files.push_back(fr);
  rep.state = shard_state_after(f.state);
  rep.error = f.error;
  rep.hint = f.hint;
  if (!f.invalid.empty()) rep.invalid_indexes = f.invalid;
  else if (m.no_transaction && f.state == FileRunState::failed) rep.invalid_indexes = all_invalid_indexes(conn, {m});
  // A leftover INVALID index of the file's name makes a plain CREATE INDEX fail with
  // "already exists": name it too.
  else if (f.state == FileRunState::failed) rep.invalid_indexes = invalid_file_indexes(conn, {m});
}

// Runs the pending files in order; the first that fails stops the shard.
void run_pending(shardio::RawConn& conn, const std::vector<Migration>& migrations, const ShardPlan& plan,
                 const RunSettings& settings, ShardReport& rep) {
  rep.state = ShardState::ok;
  for (auto i : plan.pending) {
    const auto& m = migrations[i];
    FileResult fr;
    fr.file = m.file;
    fr.version = m.version ? m.version->text() : "";
    fr.kind = m.kind;
    try {
      run_file(conn, m, settings, fr);
    } catch (const FileFailed& f) {
      report_file_failure(conn, m, f, fr, rep);
      return;
    }
    fr.state = FileRunState::applied;
    rep.files.push_back(fr);
    if (m.version && (rep.version_after.empty() || *parse_version(rep.version_after) < *m.version))
      rep.version_after = m.version->text();
  }
}

// Files applied before (also by an earlier version that recorded an IF NOT EXISTS over an
// INVALID index as applied): an index they create must be valid.
void check_applied_indexes(shardio::RawConn& conn, const std::vector<Migration>& migrations, ShardReport& rep) {
  conn.exec("RESET ALL");
  auto invalid = invalid_file_indexes(conn, migrations);
  if (invalid.empty()) return;
  rep.state = ShardState::failed;
  rep.invalid_indexes = invalid;
  rep.error = "index " + index_list(invalid) + " is INVALID, where " + invalid.front().file +
              " (recorded as applied) creates it";
  rep.hint = "drop it (the DROP is listed) and create it again in a new V<next>__ file";
}

}  // namespace

std::string rollout_dsn(const fanout::Target& target, int connect_timeout) {
  // libpq keeps the last value of a keyword: this application_name wins over the fallback.
  return fanout::dsn_with_timeout(target.dsn, connect_timeout) + " application_name='shardctl schema'";
}

ShardReport apply_shard(shardio::ServerPool& pool, const fanout::Target& target, const std::vector<Migration>& migrations,
                        const RunSettings& settings, bool check_applied) {
  ShardReport rep;
  rep.shard = target.shard;
  auto t0 = Clock::now();
  std::optional<shardio::ServerPool::Lease> conn;
  bool released = false;  // the lock given back and the session reset: the connection may serve again
  try {
    conn.emplace(pool.acquire(rollout_dsn(target, settings.connect_timeout), "shard " + target.shard));
    acquire_rollout_lock(**conn, settings.lock_timeout, target.shard);
    ensure_history(**conn);
    auto plan = plan_under_lock(**conn, migrations, target.shard, rep);
    if (!plan.started.empty()) {
      stop_at_started(**conn, migrations, plan.started.front(), target.shard, settings.directory, rep);
    } else {
      run_pending(**conn, migrations, plan, settings, rep);
      if (rep.ok() && check_applied) check_applied_indexes(**conn, migrations, rep);
      if (rep.state != ShardState::unreachable) {
        reset_and_release_rollout_lock(**conn);
        released = true;
      }
    }
  } catch (const Error& e) {
    // A failure of the shard itself (no connection, the lock, a lost connection) rather than
    // of a file; a file's failure is already in the report.
    if (rep.error.empty() || e.kind() == ErrorKind::unavailable) fail_report(rep, e);
  }
  // A connection that may still hold the lock or a file's settings is closed, not handed on.
  if (conn && !released) conn->discard();
  rep.duration_ms = ms_since(t0);
  return rep;
}

std::string baseline_refusal(const std::vector<HistoryRow>& history, const Version& version,
                             const std::vector<Migration>& files, bool* already) {
  *already = false;
  if (history.empty()) return "";
  // The same baseline again (a re-run, or a shard added later): nothing to do.
  bool same = true;
  std::size_t expected = 1 + files.size();
  if (history.size() != expected) same = false;
  for (const auto& r : history) {
    if (!r.succeeded() || r.kind != SchemaHistoryKind::baseline || !r.version) {
      same = false;
      break;
    }
    auto v = parse_version(*r.version);
    if (r.checksum.empty()) {
      if (!v || *v != version) same = false;
    } else {
      bool match = false;
      for (const auto& f : files)
        if (f.file == r.name && f.checksum == r.checksum) match = true;
      if (!match) same = false;
    }
  }
  if (same) {
    *already = true;
    return "";
  }
  auto cur = current_version(history);
  std::string msg = "it already has a schema history (";
  msg += std::to_string(history.size());
  msg += " row(s)";
  if (cur) msg += ", at version " + cur->text();
  msg += ")";
  return msg;
}

ShardReport baseline_shard(shardio::ServerPool& pool, const fanout::Target& target, const Version& version,
                           const std::vector<Migration>& files, const RunSettings& settings) {
  ShardReport rep;
  rep.shard = target.shard;
  auto t0 = Clock::now();
  std::optional<shardio::ServerPool::Lease> lease;
  bool released = false;
  try {
    lease.emplace(pool.acquire(rollout_dsn(target, settings.connect_timeout), "shard " + target.shard));
    shardio::RawConn& conn = **lease;
    acquire_rollout_lock(conn, settings.lock_timeout, target.shard);
    ensure_history(conn);
    auto history = read_history(conn);
    if (auto cur = current_version(history)) rep.version_before = cur->text();
    bool already = false;
    auto why = baseline_refusal(history, version, files, &already);
    if (!why.empty()) throw data_error("shard " + target.shard + " cannot be baselined: " + why);
    if (!already) {
      conn.exec("BEGIN");
      for (const auto& f : files) {
        NewRow r;
        r.version = f.version->text();
        r.name = f.file;
        r.kind = SchemaHistoryKind::baseline;
        r.checksum = f.checksum;
        insert_history(conn, r);
        rep.planned.push_back(f.file);
      }
      NewRow marker;
      marker.version = version.text();
      marker.name = "<baseline>";
      marker.kind = SchemaHistoryKind::baseline;
      insert_history(conn, marker);
      conn.exec("COMMIT");
    }
    rep.version_after = already ? rep.version_before : version.text();
    release_rollout_lock(conn);
    released = true;
    rep.state = ShardState::ok;
  } catch (const Error& e) {
    fail_report(rep, e);
  }
  if (lease && !released) lease->discard();  // it may hold the lock or a transaction
  rep.duration_ms = ms_since(t0);
  return rep;
}

std::string repair_refusal(const std::vector<HistoryRow>& history, const Migration& file, RepairMark mark,
                           const std::vector<InvalidIndex>& invalid, bool* needed) {
  *needed = false;
  const HistoryRow* last = nullptr;
  auto state = file_state(history, file, &last);
  if (state == RecordedState::not_run) return file.file + " never ran there (`shardctl schema apply` runs it)";
  if (mark == RepairMark::applied) {
    if (state == RecordedState::applied) return "";
    if (!invalid.empty())
      return "index " + invalid.front().index + ", which " + file.file + " creates, is INVALID: the file did not " +
             "complete (drop the index with " + invalid.front().drop_sql + " and mark the file failed instead)";
    if (last && !last->checksum.empty() && !file.matches(last->checksum))
      return file.file + " was changed since it ran there (it ran with " + last->checksum + ")";
    *needed = true;
    return "";
  }
  if (state == RecordedState::applied) return file.file + " is recorded as applied there (undo it in a new V<next>__ file)";
  *needed = state == RecordedState::started;
  return "";
}

RepairShard repair_shard(shardio::ServerPool& pool, const fanout::Target& target, const Migration& file, RepairMark mark,
                         const RunSettings& settings) {
  RepairShard rep;
  rep.shard = target.shard;
  std::optional<shardio::ServerPool::Lease> lease;
  bool released = false;
  try {
    lease.emplace(pool.acquire(rollout_dsn(target, settings.connect_timeout), "shard " + target.shard));
    shardio::RawConn& conn = **lease;
    acquire_rollout_lock(conn, settings.lock_timeout, target.shard);
    ensure_history(conn);
    // Again under the lock: the survey's answer may be stale.
    auto history = read_history(conn);
    rep.was = file_state(history, file);
    bool needed = false;
    auto why = repair_refusal(history, file, mark, invalid_file_indexes(conn, {file}), &needed);
    if (!why.empty()) {
      rep.state = RepairState::refused;
      rep.error = why;
    } else {
      if (needed) {
        auto row = row_for(file, 0, mark == RepairMark::applied ? Outcome::succeeded : Outcome::failed);
        row.note = "marked " + std::string(to_text(mark)) + " by shardctl schema repair (it was " + std::string(to_text(*rep.was)) + ")";
        insert_history(conn, row);
        rep.recorded = true;
      }
      rep.state = RepairState::ok;
    }
    release_rollout_lock(conn);
    released = true;
  } catch (const Error& e) {
    // A server out of connection slots is "unreachable" here: a repair's "refused" is its own.
    rep.state = e.kind() == ErrorKind::unavailable ? RepairState::unreachable
              : e.kind() == ErrorKind::locked    ? RepairState::locked
                                                 : RepairState::refused;
    rep.error = e.what();
    rep.hint = e.hint();
  }
  if (lease && !released) lease->discard();
  return rep;
}

}  // namespace shardctl::schema
