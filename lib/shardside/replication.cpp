#include "shardside/replication.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <functional>
#include <thread>

#include "core/error.hpp"
#include "core/words.hpp"
#include "shardside/stream_keys.hpp"
#include "pg/dsn.hpp"
#include "shardside/names.hpp"

namespace shardctl::shardside {

using shardio::RawConn;
using shardio::Result;
using Clock = std::chrono::steady_clock;

namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A name shardctl puts into replication commands and DDL unquoted: slot names allow only
// these characters, and every name this file makes has them.
void require_plain_name(const std::string& name, const char* what) {
  bool plain = !name.empty() && name.size() <= max_identifier_bytes;
  for (char c : name) plain = plain && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (!plain)
    throw internal_error(std::string("invalid ") + what + " name '" + name +
                         "' (expected [a-z0-9_], 63 bytes at most)");
}

std::string in_current_database(const std::string& column) {
  return column + " = (SELECT oid FROM pg_database WHERE datname = current_database())";
}

// The outcome of a statement whose failures the caller tells apart by SQLSTATE.
struct Outcome {
  std::string sqlstate;  // empty: it succeeded
  std::string message;
  bool ok() const { return sqlstate.empty(); }
};

// Runs one statement through the extended protocol (so it never runs in an implicit
// transaction block with others). A failure whose SQLSTATE `tolerate` accepts is returned;
// any other throws as RawConn::fail types it.
Outcome run_tolerating(RawConn& conn, const std::string& sql, const std::vector<std::string>& params,
                       const std::string& what, const std::function<bool(std::string_view)>& tolerate) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  Result r(PQexecParams(conn.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                        nullptr, 0));
  auto status = PQresultStatus(r.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return {};
  const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
  if (state && PQstatus(conn.get()) == CONNECTION_OK && tolerate(state))
    return {state, shardio::libpq_message_line(PQresultErrorMessage(r.get()))};
  conn.fail(r.get(), what);
}

Outcome run_tolerating(RawConn& conn, const std::string& sql, const std::vector<std::string>& params,
                       const std::string& what, std::initializer_list<std::string_view> tolerated) {
  return run_tolerating(conn, sql, params, what, [&](std::string_view state) {
    for (auto t : tolerated)
      if (state == t) return true;
    return false;
  });
}

constexpr std::string_view duplicate_object = "42710";
constexpr std::string_view undefined_object = "42704";
constexpr std::string_view object_in_use = "55006";
constexpr std::string_view insufficient_privilege = "42501";

std::optional<std::uint64_t> optional_lsn(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return parse_lsn(text);
}

std::uint64_t required_lsn(const std::string& text, const RawConn& conn, const char* what) {
  auto lsn = parse_lsn(text);
  if (!lsn) throw internal_error(std::string(what) + " on " + conn.role() + " is not a WAL position: '" + text + "'");
  return *lsn;
}

}  // namespace

// ---- Names ----

std::string replication_name(std::string_view op_id, int batch_no) {
  std::string hex;
  bool valid = batch_no >= 0;
  for (char c : op_id) {
    if (c == '-') continue;
    char lower = (c >= 'A' && c <= 'F') ? static_cast<char>(c - 'A' + 'a') : c;
    valid = valid && is_hex(lower);
    hex += lower;
  }
  if (!valid || hex.size() != replication_name_hex_digits)
    throw internal_error("cannot name replication objects for operation '" + std::string(op_id) + "', batch " +
                         std::to_string(batch_no) + ": not a UUID and a batch number");
  return std::string(replication_name_prefix) + hex + "_" + std::to_string(batch_no);
}

std::optional<ReplicationName> parse_replication_name(std::string_view name) {
  if (!is_replication_name_shape(name)) return std::nullopt;
  std::string_view hex = name.substr(replication_name_prefix.size(), replication_name_hex_digits);
  std::string_view digits = name.substr(replication_name_prefix.size() + replication_name_hex_digits + 1);
  long long batch = 0;
  for (char c : digits) batch = batch * 10 + (c - '0');
  if (batch > INT_MAX) return std::nullopt;
  std::string uuid;
  for (std::size_t i = 0; i < hex.size(); ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) uuid += '-';
    uuid += hex[i];
  }
  return ReplicationName{uuid, static_cast<int>(batch)};
}

std::optional<std::uint64_t> parse_lsn(std::string_view text) {
  auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto half = [](std::string_view part) -> std::optional<std::uint64_t> {
    if (part.empty() || part.size() > 8) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : part) {
      int d = (c >= '0' && c <= '9')   ? c - '0'
              : (c >= 'A' && c <= 'F') ? c - 'A' + 10
              : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                                       : -1;
      if (d < 0) return std::nullopt;
      v = v * 16 + static_cast<std::uint64_t>(d);
    }
    return v;
  };
  auto hi = half(text.substr(0, slash));
  auto lo = half(text.substr(slash + 1));
  if (!hi || !lo) return std::nullopt;
  return (*hi << 32) | *lo;
}

std::string format_lsn(std::uint64_t lsn) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%X/%X", static_cast<unsigned>(lsn >> 32), static_cast<unsigned>(lsn & 0xFFFFFFFFu));
  return buf;
}

// ---- Publication ----

bool create_publication(RawConn& source, const std::string& name, const std::vector<PublishedTable>& tables) {
  require_plain_name(name, "publication");
  if (tables.empty()) throw internal_error("publication " + name + " would publish no table");
  if (!source.query("SELECT 1 FROM pg_publication WHERE pubname = $1", {name}).empty()) return false;
  std::string sql = "CREATE PUBLICATION " + source.identifier(name) + " FOR TABLE ";
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (tables[i].row_filter.empty())
      throw internal_error("publication " + name + ": no row filter for " + tables[i].quoted);
    sql += (i ? ", " : "") + tables[i].quoted + " WHERE (" + tables[i].row_filter + ")";
  }
  // TRUNCATE is never published: it is not filtered by rows. A partitioned table's row filter
  // applies only when its changes are published as the root's (the server refuses a filter
  // on a partitioned table otherwise), and the target's root routes them to its partitions.
  sql += " WITH (publish = 'insert, update, delete', publish_via_partition_root = true)";
  // Created meanwhile by another session: the same name is the same operation's stream.
  return run_tolerating(source, sql, {}, "CREATE PUBLICATION " + name, {duplicate_object}).ok();
}

bool drop_publication(RawConn& source, const std::string& name) {
  require_plain_name(name, "publication");
  if (source.query("SELECT 1 FROM pg_publication WHERE pubname = $1", {name}).empty()) return false;
  source.exec("DROP PUBLICATION IF EXISTS " + source.identifier(name));
  return true;
}

// ---- Slot with exported snapshot ----

namespace {

// The oldest sessions of the source's server that hold a transaction id: a new logical slot
// waits for each of them to end before it is consistent.
std::string transactions_holding(const std::string& dsn, const std::string& role) {
  try {
    RawConn look(dsn, role);
    auto rows = look.query(
        "SELECT pid, coalesce(datname, ''), coalesce(application_name, ''), "
        "coalesce(extract(epoch FROM now() - xact_start)::bigint, 0) FROM pg_stat_activity "
        "WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() ORDER BY xact_start LIMIT 5");
    std::string out;
    for (const auto& r : rows)
      out += (out.empty() ? "" : "; ") + std::string("pid ") + r[0] + " (database " + r[1] +
             (r[2].empty() ? "" : ", application " + r[2]) + ", transaction open " + r[3] + " s)";
    return out.empty() ? "no session holds one now" : out;
  } catch (const Error&) {
    return "could not read pg_stat_activity";
  }
}

}  // namespace

ExportedSlot::ExportedSlot(const std::string& source_dsn, const std::string& source_role, const std::string& name,
                           std::chrono::milliseconds wait)
    : slot_name_(name) {
  require_plain_name(name, "replication slot");
  // Logical walsender mode: replication commands and plain SQL, over the simple query protocol
  // only (PQexec; RawConn::query's extended protocol is refused there).
  conn_ = std::make_unique<RawConn>(pg::normalize_dsn(source_dsn) + " replication=database", source_role);
  PGconn* c = conn_->get();
  const std::string what = "creating replication slot " + name;
  const char* waiting_hint =
      "a new slot waits for every transaction that holds a transaction id on the source's server; try again when "
      "they have ended";
  std::string command = "CREATE_REPLICATION_SLOT " + name + " LOGICAL pgoutput (SNAPSHOT 'export')";
  if (!PQsendQuery(c, command.c_str())) conn_->fail(what);
  // Wait for the result at most `wait`: the slot becomes consistent only once every transaction
  // running when it started has ended, which a forgotten open transaction can delay forever.
  auto deadline = Clock::now() + wait;
  bool cancelled = false;
  while (PQisBusy(c)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      PGcancel* cancel = PQgetCancel(c);
      char err[256];
      cancelled = cancel && PQcancel(cancel, err, sizeof err);
      PQfreeCancel(cancel);
      if (cancelled) break;
      // No cancel reached the server: closing the connection is all that is left (the server
      // drops the half-made slot when its wait ends and it finds the client gone).
      conn_.reset();
      throw locked_error(what + " on " + source_role + " waited " + std::to_string(wait.count()) +
                             " ms for transactions to end: " + transactions_holding(source_dsn, source_role),
                         waiting_hint);
    }
    pollfd fd{PQsocket(c), POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(std::min<long long>(left.count(), 100))) < 0 && errno != EINTR) conn_->fail(what);
    if (!PQconsumeInput(c)) conn_->fail(what);
  }
  // After a cancel the server answers with an error (and drops the half-made slot), unless the
  // slot was done first: then it is kept, as if there had been no cancel.
  Result r(PQgetResult(c));
  while (Result extra{PQgetResult(c)}) {
  }
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
    const char* state = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
    if (cancelled && PQstatus(c) == CONNECTION_OK) {
      conn_.reset();
      throw locked_error(what + " on " + source_role + " waited " + std::to_string(wait.count()) +
                             " ms for transactions to end: " + transactions_holding(source_dsn, source_role),
                         waiting_hint);
    }
    if (state && std::string_view(state) == duplicate_object) {
      conn_.reset();
      throw internal_error("replication slot " + name + " already exists on " + source_role +
                               ": its exported snapshot is gone with the session that created it",
                           "drop the slot and copy the stream again");
    }
    conn_->fail(r.get(), what);
  }
  if (PQntuples(r.get()) != 1 || PQnfields(r.get()) < 3)
    throw internal_error(what + " on " + source_role + ": unexpected answer");
  consistent_point_ = required_lsn(PQgetvalue(r.get(), 0, 1), *conn_, "the slot's consistent point");
  snapshot_name_ = PQgetvalue(r.get(), 0, 2);
  if (snapshot_name_.empty()) throw internal_error(what + " on " + source_role + ": the server exported no snapshot");
}

void begin_snapshot_transaction(RawConn& conn, const std::string& snapshot_name) {
  conn.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
  try {
    // A utility statement: no parameters, so a quoted literal.
    conn.exec("SET TRANSACTION SNAPSHOT " + conn.literal(snapshot_name));
  } catch (...) {
    try {
      conn.exec("ROLLBACK");
    } catch (...) {
    }
    throw;
  }
}

SlotHealth slot_health(RawConn& source, const std::string& name) {
  auto rows = source.query("SELECT coalesce(wal_status, '') FROM pg_replication_slots WHERE slot_name = $1", {name});
  if (rows.empty()) return SlotHealth::missing;
  return rows[0][0] == "lost" ? SlotHealth::lost : SlotHealth::usable;
}

bool drop_slot(RawConn& source, const std::string& name, std::chrono::milliseconds wait_inactive) {
  require_plain_name(name, "replication slot");
  auto deadline = Clock::now() + wait_inactive;
  bool existed = false;
  for (;;) {
    auto rows = source.query(
        "SELECT coalesce(s.active_pid::text, ''), coalesce(a.application_name, ''), coalesce(a.backend_type, '') "
        "FROM pg_replication_slots s LEFT JOIN pg_stat_activity a ON a.pid = s.active_pid WHERE s.slot_name = $1",
        {name});
    if (rows.empty()) return existed;
    existed = true;
    if (rows[0][0].empty()) {
      // Dropped meanwhile (undefined) or taken meanwhile (in use): look again.
      if (run_tolerating(source, "SELECT pg_drop_replication_slot($1)", {name}, "dropping replication slot " + name,
                         {undefined_object, object_in_use})
              .ok())
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (Clock::now() >= deadline)
      throw locked_error("replication slot " + name + " on " + source.role() + " is in use by pid " + rows[0][0] +
                             (rows[0][1].empty() ? "" : " (" + rows[0][2] + ", application " + rows[0][1] + ")"),
                         "drop the subscription that streams from it (its application name), or end that process, "
                         "then drop the slot again");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// ---- Subscription ----

namespace {

// Whether the subscription exists in the connection's database, and whether it is enabled.
std::optional<bool> subscription_enabled(RawConn& target, const std::string& name) {
  auto rows = target.query(
      "SELECT subenabled FROM pg_subscription WHERE subname = $1 AND " + in_current_database("subdbid"), {name});
  if (rows.empty()) return std::nullopt;
  return rows[0][0] == "t";
}

}  // namespace

bool create_subscription(RawConn& target, const SubscriptionSpec& spec) {
  require_plain_name(spec.name, "subscription");
  require_plain_name(spec.publication, "publication");
  require_plain_name(spec.slot, "replication slot");
  if (subscription_enabled(target, spec.name).has_value()) return false;
  // connect_timeout: an unreachable source fails the statement in seconds instead of hanging it.
  std::string sql =
      "CREATE SUBSCRIPTION " + target.identifier(spec.name) + " CONNECTION " +
      target.literal(pg::normalize_dsn(spec.source_dsn)) + " PUBLICATION " + target.identifier(spec.publication) +
      " WITH (create_slot = false, slot_name = " + target.literal(spec.slot) +
      ", copy_data = false, enabled = false, disable_on_error = " + (spec.disable_on_error ? "true" : "false") + ")";
  // Class 08 here is the target's server failing to reach the source, not this session's loss.
  auto out = run_tolerating(target, sql, {}, "CREATE SUBSCRIPTION " + spec.name,
                            [](std::string_view s) { return s == duplicate_object || s.starts_with("08"); });
  if (out.ok()) return true;
  if (out.sqlstate == duplicate_object) return false;
  throw unavailable_error("the server of " + target.role() + " cannot reach the source to subscribe (" +
                              pg::describe_dsn(spec.source_dsn) + "): " + out.message,
                          "the subscription connects from the target's server with the source's connection string; "
                          "it must work there (host, port, pg_hba.conf, a password in the server user's ~/.pgpass)");
}

void enable_subscription(RawConn& target, const std::string& name) {
  require_plain_name(name, "subscription");
  target.exec("ALTER SUBSCRIPTION " + target.identifier(name) + " ENABLE");
}

bool drop_subscription(RawConn& target, const std::string& name) {
  require_plain_name(name, "subscription");
  auto enabled = subscription_enabled(target, name);
  if (!enabled) return false;
  std::string sub = target.identifier(name);
  // slot_name = NONE needs a disabled subscription; without a slot, DROP never connects to
  // the source. Each statement alone: DROP SUBSCRIPTION refuses a transaction block.
  // A subscription dropped meanwhile (undefined) is what this call wants.
  if (*enabled)
    run_tolerating(target, "ALTER SUBSCRIPTION " + sub + " DISABLE", {}, "disabling subscription " + name,
                   {undefined_object});
  run_tolerating(target, "ALTER SUBSCRIPTION " + sub + " SET (slot_name = NONE)", {}, "detaching subscription " + name,
                 {undefined_object});
  target.exec("DROP SUBSCRIPTION IF EXISTS " + sub);
  return true;
}

// ---- Progress ----

std::uint64_t inserted_wal_position(RawConn& source) {
  return required_lsn(source.query("SELECT pg_current_wal_insert_lsn()::text")[0][0], source, "pg_current_wal_insert_lsn()");
}

std::uint64_t flushed_wal_position(RawConn& source) {
  source.exec("BEGIN");
  try {
    source.exec("SET LOCAL synchronous_commit = on");
    // The message is transactional, so the transaction has an id and writes WAL: its commit
    // flushes (an id alone, or WAL alone, would commit asynchronously). Executing the
    // function is the superuser's unless granted; without it, the position of now, and the
    // sender streams it once the WAL writer has flushed it.
    auto out = run_tolerating(source, "SELECT pg_logical_emit_message(true, 'shardctl', '')::text", {},
                              "marking the WAL position", {insufficient_privilege});
    if (!out.ok()) {
      source.exec("ROLLBACK");
      return inserted_wal_position(source);
    }
    // Read before the COMMIT, which flushes the WAL past it.
    auto lsn = inserted_wal_position(source);
    source.exec("COMMIT");
    return lsn;
  } catch (...) {
    try {
      source.exec("ROLLBACK");
    } catch (...) {
    }
    throw;
  }
}

// Which position says "applied". pg_stat_subscription on the target has two:
//   - received_lsn is set when a change arrives, BEFORE the apply worker applies it: not it.
//   - latest_end_lsn is set only when a keepalive arrives, to the position the sender had
//     read up to (its sentPtr). The sender decodes the WAL in order and sends a transaction
//     when it reads its commit, so every transaction committed before that position was sent
//     ahead of the keepalive; the apply worker handles messages one by one, committing each
//     transaction at its COMMIT message, so it has applied them all when it records the
//     keepalive's position. latest_end_lsn >= L therefore means every commit before L is
//     applied and visible. (This holds because the subscription does not stream in-progress
//     transactions, streaming = off, the default: streamed changes are spooled, not applied.)
//     The sender sends a keepalive whenever it waits for new WAL while the subscriber has not
//     confirmed all it was sent, so the position follows the source's WAL within milliseconds.
// The slot's confirmed_flush_lsn on the source is the subscriber's FLUSH position: with the
// subscription's synchronous_commit = off (its default) a transaction counts only once the
// target's WAL writer has flushed it and the worker's next feedback (up to a second later)
// says so. Safe, but a slower "done" than the cut-over can afford: not used for the wait.
SubscriptionProgress subscription_progress(RawConn& target, const std::string& name) {
  auto rows = target.query(
      "SELECT s.subenabled, coalesce(w.pid::text, ''), coalesce(w.received_lsn::text, ''), "
      "coalesce(w.latest_end_lsn::text, ''), coalesce(st.apply_error_count, 0) "
      "FROM pg_subscription s "
      "LEFT JOIN pg_stat_subscription w ON w.subid = s.oid AND w.relid IS NULL "
      "LEFT JOIN pg_stat_subscription_stats st ON st.subid = s.oid "
      "WHERE s.subname = $1 AND " +
          in_current_database("s.subdbid"),
      {name});
  SubscriptionProgress p;
  if (rows.empty()) return p;
  const auto& r = rows[0];
  p.exists = true;
  p.enabled = r[0] == "t";
  if (!r[1].empty()) p.worker_pid = std::stoi(r[1]);
  p.received = optional_lsn(r[2]);
  p.applied = optional_lsn(r[3]);
  p.apply_errors = std::stoll(r[4]);
  return p;
}

WaitResult wait_applied(RawConn& target, const std::string& name, std::uint64_t position,
                        std::chrono::milliseconds timeout, std::chrono::milliseconds poll) {
  auto start = Clock::now();
  WaitResult result;
  for (;;) {
    result.last = subscription_progress(target, name);
    result.waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    if (!result.last.exists || !result.last.enabled) {
      result.outcome = WaitOutcome::stopped;
      return result;
    }
    if (result.last.applied && *result.last.applied >= position) {
      result.outcome = WaitOutcome::applied;
      return result;
    }
    if (result.waited >= timeout) {
      result.outcome = WaitOutcome::timed_out;
      return result;
    }
    std::this_thread::sleep_for(poll);
  }
}

Lag replication_lag(RawConn& source, const std::string& slot, RawConn& target, const std::string& subscription) {
  auto rows = source.query(
      "SELECT pg_current_wal_lsn()::text, coalesce((SELECT extract(epoch FROM r.replay_lag)::text "
      "FROM pg_replication_slots s JOIN pg_stat_replication r ON r.pid = s.active_pid WHERE s.slot_name = $1), '')",
      {slot});
  auto now = required_lsn(rows[0][0], source, "pg_current_wal_lsn()");
  auto applied = subscription_progress(target, subscription).applied.value_or(0);
  Lag lag;
  lag.bytes = now > applied ? now - applied : 0;
  if (!rows[0][1].empty()) lag.seconds = std::stod(rows[0][1]);
  return lag;
}

// ---- Listing ----

std::vector<ReplicationObject> list_replication_objects(RawConn& db) {
  const std::vector<std::string> prefix{std::string(replication_name_prefix)};
  std::vector<ReplicationObject> out;
  auto add = [&](ReplicationObjectKind kind, const std::string& name) -> ReplicationObject* {
    auto owner = parse_replication_name(name);
    if (!owner) return nullptr;
    out.push_back(ReplicationObject{kind, name, *owner, std::nullopt, "", false});
    return &out.back();
  };
  for (const auto& r :
       db.query("SELECT pubname FROM pg_publication WHERE starts_with(pubname::text, $1) ORDER BY 1", prefix))
    add(ReplicationObjectKind::publication, r[0]);
  for (const auto& r :
       db.query("SELECT slot_name, coalesce(active_pid::text, ''), coalesce(wal_status, '') "
                "FROM pg_replication_slots WHERE slot_type = 'logical' AND database = current_database() "
                "AND starts_with(slot_name::text, $1) ORDER BY 1",
                prefix))
    if (auto* o = add(ReplicationObjectKind::slot, r[0])) {
      if (!r[1].empty()) o->active_pid = std::stoi(r[1]);
      o->wal_status = r[2];
    }
  for (const auto& r : db.query("SELECT subname, subenabled FROM pg_subscription WHERE " +
                                    in_current_database("subdbid") + " AND starts_with(subname::text, $1) ORDER BY 1",
                                prefix))
    if (auto* o = add(ReplicationObjectKind::subscription, r[0])) o->enabled = r[1] == "t";
  for (const auto& stream : watched_streams(db)) add(ReplicationObjectKind::stream_watch, stream);
  return out;
}

// ---- Preconditions ----

bool PreconditionReport::has(Requirement r) const noexcept {
  for (const auto& u : unmet)
    if (u.requirement == r) return true;
  return false;
}

void PreconditionReport::require() const {
  if (unmet.empty()) return;
  std::string more = unmet.size() > 1 ? " (and " + std::to_string(unmet.size() - 1) + " more unmet requirement" +
                                            (unmet.size() > 2 ? "s" : "") + ")"
                                      : "";
  throw usage_error(unmet.front().message + more, unmet.front().hint);
}

namespace {

// A table (or partition) whose replica identity is FULL: the target finds the old row of an
// UPDATE or DELETE by comparing every column (unless its own table has a primary key), which
// fails on a column with no equality: json, point, an array or composite of such. Each such
// column of the tree, looked for through domains, array elements and composite fields, with an
// equality wherever a default btree or hash operator class takes its type (directly, by an
// implicit binary-coercible cast, or as an enum or range).
void check_full_identity_columns(RawConn& source, const MovingTable& table, PreconditionReport& report) {
  auto rows = source.query(
      "WITH RECURSIVE rels AS ("
      "  SELECT c.oid FROM (SELECT $1::regclass AS relid UNION SELECT relid FROM pg_partition_tree($1::regclass)) t "
      "  JOIN pg_class c ON c.oid = t.relid WHERE c.relkind IN ('r', 'p') AND c.relreplident = 'f'), "
      "parts(rel, col, coltype, typ, depth) AS ("
      "  SELECT a.attrelid, a.attname::text, a.atttypid, a.atttypid, 0 FROM pg_attribute a JOIN rels ON a.attrelid = rels.oid "
      "  WHERE a.attnum > 0 AND NOT a.attisdropped "
      "  UNION ALL "
      "  SELECT p.rel, p.col, p.coltype, x.typ, p.depth + 1 FROM parts p JOIN pg_type t ON t.oid = p.typ "
      "  CROSS JOIN LATERAL (SELECT t.typbasetype AS typ WHERE t.typtype = 'd' "
      "    UNION ALL SELECT t.typelem WHERE t.typtype <> 'd' AND t.typcategory = 'A' AND t.typelem <> 0 "
      "    UNION ALL SELECT f.atttypid FROM pg_attribute f WHERE t.typtype = 'c' AND f.attrelid = t.typrelid "
      "      AND f.attnum > 0 AND NOT f.attisdropped) x "
      "  WHERE p.depth < 8) "
      "SELECT DISTINCT p.rel::regclass::text, p.col, format_type(p.coltype, NULL), (p.rel = $1::regclass)::text "
      "FROM parts p JOIN pg_type t ON t.oid = p.typ "
      "WHERE t.typtype NOT IN ('d', 'c') AND NOT (t.typcategory = 'A' AND t.typelem <> 0) AND NOT EXISTS ("
      "  SELECT 1 FROM pg_opclass o JOIN pg_am am ON am.oid = o.opcmethod "
      "  WHERE am.amname IN ('btree', 'hash') AND o.opcdefault AND (o.opcintype = p.typ "
      "    OR (t.typtype = 'e' AND o.opcintype = 'anyenum'::regtype) OR (t.typtype = 'r' AND o.opcintype = 'anyrange'::regtype) "
      "    OR (t.typtype = 'm' AND o.opcintype = 'anymultirange'::regtype) "
      "    OR EXISTS (SELECT 1 FROM pg_cast k WHERE k.castsource = p.typ AND k.casttarget = o.opcintype "
      "               AND k.castmethod = 'b' AND k.castcontext = 'i'))) "
      "ORDER BY 1, 2",
      {table.quoted});
  for (const auto& r : rows) {
    std::string what = r[3] == "true" ? "table " + table.quoted : "table " + table.quoted + " (partition " + r[0] + ")";
    report.unmet.push_back(
        {Requirement::replica_identity,
         source.role() + ": " + what + ": its replica identity is FULL and column " + r[1] + " (" + r[2] +
             ") has no equality operator; the target could not find the old row of an UPDATE or DELETE",
         "give " + r[0] + " a primary key or REPLICA IDENTITY USING INDEX (a unique index on NOT NULL columns), or a "
                         "comparable type for " + r[1] + " (jsonb for json)"});
  }
}

// The relations (the table, or each member of its partition tree) whose replica identity does
// not cover `column`, with what their identity is.
void check_replica_identity(RawConn& source, const MovingTable& table, PreconditionReport& report) {
  auto exists = source.query("SELECT to_regclass($1) IS NOT NULL", {table.quoted});
  if (exists[0][0] != "t") {
    report.unmet.push_back({Requirement::replica_identity,
                            source.role() + ": table " + table.quoted + " does not exist",
                            "create it, or leave it out of the move"});
    return;
  }
  check_full_identity_columns(source, table, report);
  for (const auto& column : table.key_columns) {
    // The identity's columns are its index's key columns (INCLUDE columns are not part of it);
    // FULL covers every column. Publishing through the partition root, the server still
    // checks each partition's own identity against the root's filter. (pg_partition_tree
    // returns nothing for a table that is not partitioned: the table itself is added.)
    auto rows = source.query(
        "SELECT c.oid::regclass::text, c.relreplident::text, "
        "coalesce((SELECT i.indexrelid::regclass::text FROM pg_index i WHERE i.indrelid = c.oid AND "
        "((c.relreplident = 'd' AND i.indisprimary) OR (c.relreplident = 'i' AND i.indisreplident))), ''), "
        "(c.oid = $1::regclass)::text "
        "FROM (SELECT $1::regclass AS relid, 0 AS level UNION SELECT relid, level FROM "
        "pg_partition_tree($1::regclass)) t "
        "JOIN pg_class c ON c.oid = t.relid "
        "WHERE c.relkind IN ('r', 'p') AND c.relreplident <> 'f' AND NOT EXISTS ("
        "  SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "  AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1]) "
        "  WHERE i.indrelid = c.oid AND a.attname = $2 "
        "  AND ((c.relreplident = 'd' AND i.indisprimary) OR (c.relreplident = 'i' AND i.indisreplident))) "
        "ORDER BY t.level, 1",
        {table.quoted, column});
    for (const auto& r : rows) {
      std::string identity = r[1] == "n"    ? "NOTHING"
                             : r[2].empty() ? "DEFAULT, and it has no primary key"
                             : r[1] == "d"  ? "its primary key " + r[2]
                                            : "index " + r[2];
      std::string what = r[3] == "true" ? "table " + table.quoted : "table " + table.quoted + " (partition " + r[0] + ")";
      report.unmet.push_back(
          {Requirement::replica_identity,
           source.role() + ": " + what + ": its replica identity (" + identity + ") does not include key column " +
               column + "; while an online move publishes the table filtered on that key, UPDATE and DELETE on it fail",
           "give " + r[0] +
               " a primary key or REPLICA IDENTITY USING INDEX (a unique index on NOT NULL columns) that "
               "includes " +
               column});
    }
  }
}

}  // namespace

PreconditionReport check_source(RawConn& source, const std::vector<MovingTable>& tables, int streams) {
  PreconditionReport report;
  auto r = source.query(
      "SELECT current_setting('server_version_num')::int, current_setting('server_version'), "
      "current_setting('wal_level'), current_setting('max_replication_slots')::int, "
      "(SELECT count(*) FROM pg_replication_slots), current_setting('max_wal_senders')::int, "
      "(SELECT count(*) FROM pg_stat_replication), current_setting('max_slot_wal_keep_size'), "
      "(SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user), current_user")[0];
  const std::string& where = source.role();
  if (std::stoi(r[0]) < 150000)
    report.unmet.push_back(
        {Requirement::server_version,
         where + " runs PostgreSQL " + r[1] + "; online moves need 15 or later (publication row filters)",
         "upgrade the server, or move without --online"});
  if (r[2] != "logical")
    report.unmet.push_back({Requirement::wal_level, where + " has wal_level = " + r[2] + "; online moves need logical",
                            "set wal_level = logical and restart the server"});
  int free_slots = std::stoi(r[3]) - std::stoi(r[4]);
  if (free_slots < streams)
    report.unmet.push_back(
        {Requirement::replication_slots,
         where + " has " + std::to_string(free_slots) + " free replication slot(s) of max_replication_slots = " + r[3] +
             "; the move needs " + std::to_string(streams),
         "raise max_replication_slots (restart), or drop slots nothing uses (pg_replication_slots)"});
  int free_senders = std::stoi(r[5]) - std::stoi(r[6]);
  if (free_senders < streams)
    report.unmet.push_back({Requirement::wal_senders,
                            where + " has " + std::to_string(free_senders) +
                                " free WAL sender(s) of max_wal_senders = " + r[5] + "; the move needs " +
                                std::to_string(streams),
                            "raise max_wal_senders (restart)"});
  if (r[7] == "-1")
    report.unmet.push_back(
        {Requirement::slot_wal_keep_size,
         where + " has max_slot_wal_keep_size = -1: a slot a stuck move leaves behind would keep WAL "
                 "until the disk fills",
         "set max_slot_wal_keep_size (more than the WAL the source writes during one move) and reload"});
  if (r[8] != "t")
    report.unmet.push_back(
        {Requirement::replication_role,
         where + ": role " + r[9] + " may not create replication slots (neither superuser nor REPLICATION)",
         "ALTER ROLE " + r[9] + " REPLICATION, or connect as a role that has it"});
  for (const auto& t : tables) check_replica_identity(source, t, report);
  return report;
}

PreconditionReport check_target(RawConn& target, int streams) {
  PreconditionReport report;
  auto r = target.query(
      "SELECT current_setting('server_version_num')::int, current_setting('server_version'), "
      "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user), current_user, "
      "current_setting('max_replication_slots')::int, (SELECT count(*) FROM pg_replication_origin), "
      "current_setting('max_logical_replication_workers')::int, "
      "(SELECT count(*) FROM pg_stat_subscription WHERE pid IS NOT NULL)")[0];
  const std::string& where = target.role();
  if (std::stoi(r[0]) < 150000)
    report.unmet.push_back({Requirement::server_version,
                            where + " runs PostgreSQL " + r[1] + "; online moves need 15 or later",
                            "upgrade the server, or move without --online"});
  if (r[2] != "t")
    report.unmet.push_back({Requirement::subscription_role,
                            where + ": role " + r[3] + " may not create subscriptions (PostgreSQL 15: superuser only)",
                            "connect to the target as a superuser, or move without --online"});
  // A subscriber tracks each subscription's progress in a replication origin, as many as
  // max_replication_slots allows.
  int free_origins = std::stoi(r[4]) - std::stoi(r[5]);
  if (free_origins < streams)
    report.unmet.push_back({Requirement::replication_origins,
                            where + " has " + std::to_string(free_origins) +
                                " free replication origin(s) (max_replication_slots = " + r[4] + "); the move needs " +
                                std::to_string(streams),
                            "raise max_replication_slots on the target (restart)"});
  int free_workers = std::stoi(r[6]) - std::stoi(r[7]);
  if (free_workers < streams)
    report.unmet.push_back(
        {Requirement::replication_workers,
         where + " has " + std::to_string(free_workers) + " free apply worker(s) (max_logical_replication_workers = " +
             r[6] + "); the move needs " + std::to_string(streams),
         "raise max_logical_replication_workers (and max_worker_processes) on the target (restart)"});
  return report;
}

}  // namespace shardctl::shardside
