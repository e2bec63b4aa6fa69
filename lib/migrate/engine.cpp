// Engine: journaling, running and resuming split operations. Every step is idempotent and is
// journaled after it happens, so a process killed anywhere leaves the operation resumable:
// `op resume` redoes at most the step in flight, and each step checks what is already done.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "catalog/key_sql.hpp"
#include "catalog/locks.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "migrate/fault.hpp"
#include "migrate/guard.hpp"
#include "migrate/operation.hpp"
#include "migrate/raw_conn.hpp"
#include "migrate/shard_schema.hpp"

namespace shardctl::migrate {
using routing::KeyRange;

namespace {

std::string column_list(const std::vector<std::string>& cols) {
  std::string out;
  for (const auto& c : cols) out += (out.empty() ? "" : ", ") + catalog::quote_ident(c);
  return out;
}

std::string holder_name() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

std::optional<std::string> text_of(const routing::Key* k) {
  if (!k) return std::nullopt;
  return routing::format_key(*k);
}

// Session settings for shard connections: row text identical on every server, so checksums
// compare; and commits durable whatever the server's default (a copy or purge that a crash
// could undo after it was journaled would lose or duplicate rows).
constexpr const char* session_settings =
    "SET DateStyle = ISO; SET TimeZone = 'UTC'; SET extra_float_digits = 3; SET bytea_output = 'hex'; "
    "SET IntervalStyle = postgres; SET synchronous_commit = on";

// The op's context, rebuilt from the catalog on every run so resume needs nothing else.
struct Context {
  std::string op_id;
  std::int64_t token = 0;
  catalog::Map map;
  RouteSpace space;
  catalog::Shard source, target;
  KeyRange range;
  std::vector<PlannedTable> tables;
  std::vector<std::string> references;
  std::string column, ctor;  // the mappings range column of this map and its constructor
};

// Adds the wall time of its scope to a counter.
class Stopwatch {
 public:
  explicit Stopwatch(double& total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~Stopwatch() { total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  Stopwatch(const Stopwatch&) = delete;
  Stopwatch& operator=(const Stopwatch&) = delete;

 private:
  double& total_;
  std::chrono::steady_clock::time_point start_;
};

struct Batch {
  int no;
  KeyRange range;
  std::string step;
};

class Runner {
 public:
  Runner(pg::Connection& catalog, Context ctx, std::function<void(const Progress&)> progress)
      : catalog_(catalog), ctx_(std::move(ctx)), progress_(std::move(progress)) {}

  OpStatus run();

 private:
  void fence(pqxx::work& tx) {
    auto r = tx.exec_params("SELECT fencing_token FROM shardctl.operations WHERE op_id = $1 FOR UPDATE", ctx_.op_id);
    if (r.empty() || r[0][0].as<std::int64_t>() != ctx_.token)
      throw locked_error("operation " + ctx_.op_id + " was taken over by another process",
                         "this process stops without touching the map or any row");
  }
  void journal(const Batch& b, const std::string& step, std::int64_t rows = -1) {
    catalog_.transact([&](pqxx::work& tx) {
      fence(tx);
      tx.exec_params("UPDATE shardctl.op_batches SET step = $3, rows_moved = CASE WHEN $4 >= 0 THEN $4 ELSE rows_moved END, "
                     "updated_at = now() WHERE op_id = $1 AND batch_no = $2",
                     ctx_.op_id, b.no, step, rows);
      tx.exec_params("UPDATE shardctl.operations SET phase = $2, updated_at = now(), heartbeat_at = now(), "
                     "lease_until = now() + interval '60 seconds' WHERE op_id = $1",
                     ctx_.op_id, "batch " + std::to_string(b.no) + " " + step);
    });
  }
  std::vector<Batch> batches();
  void take_offline(const Batch& b);
  std::int64_t copy(const Batch& b);
  void verify(const Batch& b);
  void flip(const Batch& b);
  void purge(const Batch& b);
  void copy_references();
  void coalesce();
  void finish(const std::string& status);
  std::vector<GuardedTable> guarded() const {
    std::vector<GuardedTable> out;
    for (const auto& t : ctx_.tables) out.push_back({t.quoted, t.key_column});
    return out;
  }
  std::string filter(RawConn& conn, const PlannedTable& t, const KeyRange& r) {
    return key_filter(conn, ctx_.space, catalog::quote_ident(t.key_column), r);
  }
  std::string checksum(RawConn& conn, const PlannedTable& t, const KeyRange& r) {
    auto row = conn.query("SELECT count(*) || ':' || coalesce(sum(('x' || substr(md5(x::text), 1, 16))::bit(64)::bigint::numeric), 0) "
                          "FROM (SELECT " + column_list(t.columns) + " FROM " + t.quoted + " WHERE " + filter(conn, t, r) +
                          ") x");
    return row[0][0];
  }

  pg::Connection& catalog_;
  Context ctx_;
  std::function<void(const Progress&)> progress_;
  FaultInjector faults_;
  std::unique_ptr<RawConn> source_, target_;
  Progress stats_;
};

std::vector<Batch> Runner::batches() {
  std::vector<Batch> out;
  routing::KeyType bt = catalog::bound_type(ctx_.map.kind, ctx_.map.key_type);
  catalog_.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec_params(
             "SELECT batch_no, coalesce(lower(int_range)::text, lower(text_range)::text, lower(uuid_range)::text), "
             "coalesce(upper(int_range)::text, upper(text_range)::text, upper(uuid_range)::text), step "
             "FROM shardctl.op_batches WHERE op_id = $1 ORDER BY batch_no",
             ctx_.op_id)) {
      Batch b{r[0].as<int>(), {}, r[3].as<std::string>()};
      if (!r[1].is_null()) b.range.low = routing::parse_key(bt, r[1].as<std::string>());
      if (!r[2].is_null()) b.range.high = routing::parse_key(bt, r[2].as<std::string>());
      out.push_back(b);
    }
  });
  return out;
}

// Cuts the batch out of the source mapping that holds it and marks it offline; installs the
// write guard for it on the source.
void Runner::take_offline(const Batch& b) {
  auto lo = text_of(b.range.low ? &*b.range.low : nullptr), hi = text_of(b.range.high ? &*b.range.high : nullptr);
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    std::string batch_expr = ctx_.ctor + "($3, $4, '[)')";
    auto exact = tx.exec_params("SELECT status FROM shardctl.mappings WHERE map_id = $1 AND shard_id = $2 AND " +
                                    ctx_.column + " = " + batch_expr,
                                ctx_.map.id, ctx_.source.id, lo, hi);
    if (!exact.empty()) {
      tx.exec_params("UPDATE shardctl.mappings SET status = 'offline' WHERE map_id = $1 AND shard_id = $2 AND " +
                         ctx_.column + " = " + batch_expr,
                     ctx_.map.id, ctx_.source.id, lo, hi);
      return;
    }
    auto holder = tx.exec_params(
        "SELECT mapping_id, lower(" + ctx_.column + ")::text, upper(" + ctx_.column +
            ")::text FROM shardctl.mappings WHERE map_id = $1 AND shard_id = $2 AND " + ctx_.column + " @> " + batch_expr +
            " FOR UPDATE",
        ctx_.map.id, ctx_.source.id, lo, hi);
    if (holder.empty())
      throw internal_error("no mapping of map " + ctx_.map.name + " on " + ctx_.source.name + " holds batch " +
                           routing::format_range(b.range));
    auto id = holder[0][0].as<std::int64_t>();
    std::optional<std::string> h_lo, h_hi;
    if (!holder[0][1].is_null()) h_lo = holder[0][1].as<std::string>();
    if (!holder[0][2].is_null()) h_hi = holder[0][2].as<std::string>();
    tx.exec_params("DELETE FROM shardctl.mappings WHERE mapping_id = $1", id);
    auto insert = [&](const std::optional<std::string>& l, const std::optional<std::string>& u, const std::string& status) {
      tx.exec_params("INSERT INTO shardctl.mappings (map_id, shard_id, status, " + ctx_.column + ") VALUES ($1, $2, $5, " +
                         ctx_.ctor + "($3, $4, '[)'))",
                     ctx_.map.id, ctx_.source.id, l, u, status);
    };
    if (lo && h_lo != lo) insert(h_lo, lo, "online");  // the part before the batch
    insert(lo, hi, "offline");
    if (hi && h_hi != hi) insert(hi, h_hi, "online");  // the part after it
  });
  faults_.point("offline.mapping");
  install_guard(*source_, ctx_.space, guarded());
  add_offline_range(*source_, ctx_.op_id, b.no, b.range);
  catalog_.transact([&](pqxx::work& tx) {
    for (const auto& t : ctx_.tables)
      tx.exec_params("INSERT INTO shardctl.guards (op_id, shard_id, table_name) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                     ctx_.op_id, ctx_.source.id, t.name);
  });
  faults_.point("offline.guard");
}

// Copies the batch's rows of every table, parents first, in one target transaction: the
// target holds all of the batch or none of it. A batch found on the target was committed by
// an earlier run of this operation (the target range was checked empty before the first one).
std::int64_t Runner::copy(const Batch& b) {
  bool present = false;
  for (const auto& t : ctx_.tables)
    present = present || target_->query("SELECT EXISTS (SELECT 1 FROM " + t.quoted + " WHERE " +
                                        filter(*target_, t, b.range) + ")")[0][0] == "t";
  std::int64_t rows = 0;
  if (!present) {
    target_->exec("BEGIN");
    for (const auto& t : ctx_.tables) {
      std::string order = t.order_by.empty() ? "" : " ORDER BY " + column_list(t.order_by);
      stats_.bytes += pump_copy(*source_,
                                "COPY (SELECT " + column_list(t.columns) + " FROM " + t.quoted + " WHERE " +
                                    filter(*source_, t, b.range) + order + ") TO STDOUT (FORMAT binary)",
                                *target_, "COPY " + t.quoted + " (" + column_list(t.columns) + ") FROM STDIN (FORMAT binary)");
      faults_.point("copy.table");
    }
    target_->exec("COMMIT");
  }
  faults_.point("copy.commit");
  for (const auto& t : ctx_.tables)
    rows += std::stoll(target_->query("SELECT count(*) FROM " + t.quoted + " WHERE " + filter(*target_, t, b.range))[0][0]);
  return rows;
}

void Runner::verify(const Batch& b) {
  for (const auto& t : ctx_.tables) {
    auto s = checksum(*source_, t, b.range), d = checksum(*target_, t, b.range);
    if (s != d)
      throw internal_error("verification of " + t.name + " batch " + routing::format_range(b.range) + " failed: " +
                               ctx_.source.name + " has count:checksum " + s + ", " + ctx_.target.name + " has " + d,
                           "nothing was deleted; the batch stays offline on " + ctx_.source.name + " until resolved");
  }
  faults_.point("verify");
}

void Runner::flip(const Batch& b) {
  auto lo = text_of(b.range.low ? &*b.range.low : nullptr), hi = text_of(b.range.high ? &*b.range.high : nullptr);
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    tx.exec_params("UPDATE shardctl.mappings SET shard_id = $5, status = 'online' WHERE map_id = $1 AND shard_id IN ($2, $5) AND " +
                       ctx_.column + " = " + ctx_.ctor + "($3, $4, '[)')",
                   ctx_.map.id, ctx_.source.id, lo, hi, ctx_.target.id);
  });
  faults_.point("flip");
}

// Deletes the moved rows from the source, children first, and lifts the batch's guard range,
// in one source transaction; the lease is checked just before commit.
void Runner::purge(const Batch& b) {
  source_->exec("BEGIN");
  source_->exec("SET LOCAL shardctl.guard_bypass = 'on'");
  for (auto it = ctx_.tables.rbegin(); it != ctx_.tables.rend(); ++it)
    source_->exec("DELETE FROM " + it->quoted + " WHERE " + filter(*source_, *it, b.range));
  source_->query("DELETE FROM shardctl.offline_ranges WHERE op_id = $1 AND batch_no = $2", {ctx_.op_id, std::to_string(b.no)});
  catalog_.read([&](pqxx::work& tx) { fence(tx); });
  source_->exec("COMMIT");
  faults_.point("purge");
}

void Runner::copy_references() {
  for (const auto& ref : ctx_.references) {
    if (table_columns(*target_, ref).empty()) continue;
    if (target_->query("SELECT EXISTS (SELECT 1 FROM " + ref + ")")[0][0] == "t") continue;
    std::vector<std::string> cols;
    for (const auto& c : table_columns(*source_, ref)) cols.push_back(c.name);
    target_->exec("BEGIN");
    pump_copy(*source_, "COPY (SELECT " + column_list(cols) + " FROM " + ref + ") TO STDOUT (FORMAT binary)", *target_,
              "COPY " + ref + " (" + column_list(cols) + ") FROM STDIN (FORMAT binary)");
    target_->exec("COMMIT");
  }
  faults_.point("references");
}

// Joins adjacent online mappings of the same shard inside the operation's range, so a split
// leaves one mapping per side however many batches it took.
void Runner::coalesce() {
  routing::KeyType bt = catalog::bound_type(ctx_.map.kind, ctx_.map.key_type);
  auto lo = text_of(ctx_.range.low ? &*ctx_.range.low : nullptr), hi = text_of(ctx_.range.high ? &*ctx_.range.high : nullptr);
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
             rows[j + 1][2].as<std::string>() == "online" && rows[i][2].as<std::string>() == "online" &&
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

void Runner::finish(const std::string& status) {
  coalesce();
  remove_guard(*source_, ctx_.op_id, guarded());
  faults_.point("unguard");
  catalog_.transact([&](pqxx::work& tx) {
    fence(tx);
    tx.exec_params("DELETE FROM shardctl.guards WHERE op_id = $1", ctx_.op_id);
    tx.exec_params("UPDATE shardctl.operations SET status = $2, phase = $2, finished_at = now(), updated_at = now(), "
                   "lease_holder = NULL, lease_until = NULL WHERE op_id = $1",
                   ctx_.op_id, status);
  });
}

OpStatus Runner::run() {
  source_ = std::make_unique<RawConn>(ctx_.source.dsn, "shard " + ctx_.source.name);
  target_ = std::make_unique<RawConn>(ctx_.target.dsn, "shard " + ctx_.target.name);
  source_->exec(session_settings);
  target_->exec(session_settings);
  copy_references();
  auto all = batches();
  stats_.batches = static_cast<int>(all.size());
  for (const auto& b : all) {
    stats_.batch = b.no;
    if (b.step == "done") continue;
    if (b.step == "planned") {
      bool cancel = false;
      catalog_.read([&](pqxx::work& tx) {
        cancel = tx.exec_params1("SELECT cancel_requested FROM shardctl.operations WHERE op_id = $1", ctx_.op_id)[0].as<bool>();
      });
      if (cancel) {
        finish("cancelled");
        return OpStatus{};
      }
      {
        Stopwatch w(stats_.catalog_seconds);
        take_offline(b);
        journal(b, "offline");
      }
      faults_.point("journal.offline");
    }
    std::int64_t rows = 0;
    if (b.step != "flipped") {
      // Also when journaled as copied: copy() finds the batch on the target and does nothing,
      // unless the target lost it (a crash of a server that does not sync commits).
      {
        Stopwatch w(stats_.copy_seconds);
        rows = copy(b);
      }
      if (b.step != "copied") journal(b, "copied", rows);
      faults_.point("journal.copied");
    }
    if (b.step != "flipped") {
      {
        Stopwatch w(stats_.verify_seconds);
        verify(b);
      }
      flip(b);
      journal(b, "flipped");
      faults_.point("journal.flipped");
    }
    {
      Stopwatch w(stats_.purge_seconds);
      purge(b);
    }
    journal(b, "done");
    faults_.point("journal.done");
    stats_.rows += rows;
    if (progress_) progress_(stats_);
  }
  finish("done");
  faults_.point("finished");
  if (progress_) progress_(stats_);
  return OpStatus{};
}

}  // namespace

namespace {

constexpr const char* op_select =
    "SELECT o.op_id::text, o.kind, mp.name AS map, o.status, coalesce(o.phase, '') AS phase, "
    "coalesce(o.int_range::text, o.text_range::text, o.uuid_range::text, '') AS range, "
    "coalesce(s.name, '') AS source, coalesce(t.name, '') AS target, "
    "(SELECT count(*) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) AS batches, "
    "(SELECT count(*) FROM shardctl.op_batches b WHERE b.op_id = o.op_id AND b.step = 'done') AS batches_done, "
    "(SELECT coalesce(sum(rows_moved), 0) FROM shardctl.op_batches b WHERE b.op_id = o.op_id) AS rows_moved, "
    "o.cancel_requested, coalesce(o.error, '') AS error, coalesce(o.lease_holder, '') AS lease_holder, "
    "o.created_at::text, o.updated_at::text "
    "FROM shardctl.operations o LEFT JOIN shardctl.maps mp USING (map_id) "
    "LEFT JOIN shardctl.shards s ON s.shard_id = o.source_shard_id "
    "LEFT JOIN shardctl.shards t ON t.shard_id = o.target_shard_id ";

OpStatus op_from(const pqxx::row& r) {
  OpStatus o;
  o.id = r["op_id"].as<std::string>();
  o.kind = r["kind"].as<std::string>();
  o.map = r["map"].is_null() ? "" : r["map"].as<std::string>();
  o.status = r["status"].as<std::string>();
  o.phase = r["phase"].as<std::string>();
  o.range = r["range"].as<std::string>();
  o.source = r["source"].as<std::string>();
  o.target = r["target"].as<std::string>();
  o.batches = r["batches"].as<int>();
  o.batches_done = r["batches_done"].as<int>();
  o.rows_moved = r["rows_moved"].as<std::int64_t>();
  o.cancel_requested = r["cancel_requested"].as<bool>();
  o.error = r["error"].as<std::string>();
  o.lease_holder = r["lease_holder"].as<std::string>();
  o.created_at = r["created_at"].as<std::string>();
  o.updated_at = r["updated_at"].as<std::string>();
  return o;
}

bool valid_uuid(const std::string& s) {
  routing::Uuid u;
  return routing::try_parse_uuid(s, u);
}

}  // namespace

nlohmann::json to_json(const OpStatus& o) {
  return {{"id", o.id},           {"kind", o.kind},
          {"map", o.map},         {"status", o.status},
          {"phase", o.phase},     {"range", o.range},
          {"source", o.source},   {"target", o.target},
          {"batches", o.batches}, {"batches_done", o.batches_done},
          {"rows_moved", o.rows_moved}, {"cancel_requested", o.cancel_requested},
          {"error", o.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.error)},
          {"lease_holder", o.lease_holder.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.lease_holder)},
          {"created_at", o.created_at}, {"updated_at", o.updated_at}};
}

Engine::Engine(pg::Connection& catalog) : catalog_(catalog) { catalog::Store check(catalog_); }

std::string Engine::start(const Plan& plan, const SplitRequest& req) {
  std::string column = catalog::range_column(plan.map.kind, plan.map.key_type);
  std::string ctor = catalog::range_constructor(plan.map.kind, plan.map.key_type);
  auto lo = text_of(plan.range.low ? &*plan.range.low : nullptr), hi = text_of(plan.range.high ? &*plan.range.high : nullptr);
  std::string op_id;
  catalog_.transact([&](pqxx::work& tx) {
    // Operations on one map are created one at a time, so the overlap check below cannot race.
    tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext('map:' || $2::text))", catalog::lock_class, plan.map.id);
    auto clash = tx.exec_params("SELECT op_id::text, kind, status FROM shardctl.operations WHERE map_id = $1 AND "
                                "status NOT IN ('done', 'cancelled') AND " + column + " && " + ctor + "($2, $3, '[)')",
                                plan.map.id, lo, hi);
    if (!clash.empty())
      throw locked_error("operation " + clash[0][0].as<std::string>() + " (" + clash[0][1].as<std::string>() + ", " +
                             clash[0][2].as<std::string>() + ") already works on an overlapping range of map " + plan.map.name,
                         "wait for it (`shardctl op wait ID`), resume it, or cancel it");
    auto still = tx.exec_params("SELECT 1 FROM shardctl.mappings WHERE mapping_id = $1 AND status = 'online' FOR UPDATE",
                                plan.mapping.id);
    if (still.empty()) throw locked_error("the mapping changed while planning", "run the command again");
    nlohmann::json args = {{"map", req.map}, {"at", req.at}, {"to", req.to},
                           {"move", req.move_upper ? "upper" : "lower"}, {"batch_size", req.batch_size}};
    op_id = tx.exec_params1("INSERT INTO shardctl.operations (op_id, kind, map_id, " + column +
                                ", args, status, phase, source_shard_id, target_shard_id, batch_size, lease_holder, "
                                "lease_until, heartbeat_at) VALUES (gen_random_uuid(), 'split', $1, " + ctor +
                                "($2, $3, '[)'), $4::jsonb, 'running', 'planned', $5, $6, $7, $8, now() + interval '60 seconds', "
                                "now()) RETURNING op_id::text",
                            plan.map.id, lo, hi, args.dump(), plan.source.id, plan.target.id, req.batch_size, holder_name())[0]
                .as<std::string>();
    for (std::size_t i = 0; i < plan.batches.size(); ++i) {
      const auto& b = plan.batches[i];
      tx.exec_params("INSERT INTO shardctl.op_batches (op_id, batch_no, " + column + ") VALUES ($1, $2, " + ctor +
                         "($3, $4, '[)'))",
                     op_id, static_cast<int>(i + 1), text_of(b.low ? &*b.low : nullptr), text_of(b.high ? &*b.high : nullptr));
    }
  });
  return op_id;
}

OpStatus Engine::run(const std::string& op_id, const std::function<void(const Progress&)>& progress) {
  if (!valid_uuid(op_id)) throw usage_error("'" + op_id + "' is not an operation id", "`shardctl op list` shows them");
  // One live runner per operation: a session lock, released by the server the moment the
  // holding process dies, so a killed run can be resumed at once.
  bool locked = false;
  catalog_.read([&](pqxx::work& tx) {
    locked = tx.exec_params1("SELECT pg_try_advisory_lock($1, hashtext($2))", catalog::lock_class, op_id)[0].as<bool>();
  });
  if (!locked) {
    auto st = status(op_id);
    throw locked_error("operation " + op_id + " is being run by " + (st.lease_holder.empty() ? "another process" : st.lease_holder),
                       "wait for it with `shardctl op wait " + op_id + "`");
  }
  Context ctx;
  ctx.op_id = op_id;
  std::string state;
  std::int64_t source_id = 0, target_id = 0;
  catalog_.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params("SELECT kind, status, map_id, source_shard_id, target_shard_id, "
                            "coalesce(lower(int_range)::text, lower(text_range)::text, lower(uuid_range)::text), "
                            "coalesce(upper(int_range)::text, upper(text_range)::text, upper(uuid_range)::text) "
                            "FROM shardctl.operations WHERE op_id = $1 FOR UPDATE",
                            op_id);
    if (r.empty()) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
    state = r[0][1].as<std::string>();
    if (state == "done" || state == "cancelled") return;
    if (r[0][0].as<std::string>() != "split") throw usage_error("operation " + op_id + " is not a split");
    source_id = r[0][3].as<std::int64_t>();
    target_id = r[0][4].as<std::int64_t>();
    auto map_row = tx.exec_params1("SELECT name FROM shardctl.maps WHERE map_id = $1", r[0][2].as<std::int64_t>());
    ctx.map.name = map_row[0].as<std::string>();
    ctx.token = tx.exec_params1("UPDATE shardctl.operations SET status = 'running', error = NULL, lease_holder = $2, "
                                "lease_until = now() + interval '60 seconds', heartbeat_at = now(), "
                                "fencing_token = fencing_token + 1 WHERE op_id = $1 RETURNING fencing_token",
                                op_id, holder_name())[0]
                    .as<std::int64_t>();
    if (!r[0][5].is_null()) ctx.range.low = routing::Key{r[0][5].as<std::string>()};
    if (!r[0][6].is_null()) ctx.range.high = routing::Key{r[0][6].as<std::string>()};
  });
  if (state == "done" || state == "cancelled") {
    catalog_.read([&](pqxx::work& tx) { tx.exec_params("SELECT pg_advisory_unlock($1, hashtext($2))", catalog::lock_class, op_id); });
    return status(op_id);
  }

  catalog::Store store(catalog_);
  ctx.map = store.get_map(ctx.map.name);
  ctx.space = RouteSpace{ctx.map.kind, ctx.map.key_type};
  routing::KeyType bt = catalog::bound_type(ctx.map.kind, ctx.map.key_type);
  if (ctx.range.low) ctx.range.low = routing::parse_key(bt, std::get<std::string>(*ctx.range.low));
  if (ctx.range.high) ctx.range.high = routing::parse_key(bt, std::get<std::string>(*ctx.range.high));
  for (const auto& s : store.list_shards()) {
    if (s.id == source_id) ctx.source = s;
    if (s.id == target_id) ctx.target = s;
  }
  ctx.column = catalog::range_column(ctx.map.kind, ctx.map.key_type);
  ctx.ctor = catalog::range_constructor(ctx.map.kind, ctx.map.key_type);

  try {
    RawConn source(ctx.source.dsn, "shard " + ctx.source.name);
    for (const auto& t : store.list_tables()) {
      if (t.kind == "reference") ctx.references.push_back(catalog::quote_qualified(t.name));
      if (t.kind == "sharded" && t.map == ctx.map.name) ctx.tables.push_back(describe_table(source, t));
    }
    sort_by_foreign_keys(source, ctx.tables);
    Runner(catalog_, ctx, progress).run();
  } catch (const Error& e) {
    // Journal the failure for `op show`; the operation stays resumable.
    try {
      catalog_.transact([&](pqxx::work& tx) {
        tx.exec_params("UPDATE shardctl.operations SET status = 'failed', error = $2, lease_holder = NULL, updated_at = now() "
                       "WHERE op_id = $1 AND fencing_token = $3",
                       op_id, std::string(e.what()), ctx.token);
      });
    } catch (...) {
    }
    throw Error(e.kind(), std::string(e.what()) + " (operation " + op_id + ")",
                e.hint().empty() ? "`shardctl op resume " + op_id + "` continues where it stopped" : e.hint());
  }
  catalog_.read([&](pqxx::work& tx) { tx.exec_params("SELECT pg_advisory_unlock($1, hashtext($2))", catalog::lock_class, op_id); });
  return status(op_id);
}

void Engine::request_cancel(const std::string& op_id) {
  if (!valid_uuid(op_id)) throw usage_error("'" + op_id + "' is not an operation id");
  catalog_.transact([&](pqxx::work& tx) {
    auto r = tx.exec_params("UPDATE shardctl.operations SET cancel_requested = true, updated_at = now() "
                            "WHERE op_id = $1 RETURNING status",
                            op_id);
    if (r.empty()) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
  });
}

// A "running" operation whose runner's session lock is free has no live process: it was
// killed or lost its catalog connection, and waits for `op resume`.
static void mark_interrupted(pg::Connection& catalog, OpStatus& op) {
  if (op.status != "running") return;
  catalog.read([&](pqxx::work& tx) {
    bool free = tx.exec_params1("SELECT pg_try_advisory_lock($1, hashtext($2))", catalog::lock_class, op.id)[0].as<bool>();
    if (free) {
      tx.exec_params("SELECT pg_advisory_unlock($1, hashtext($2))", catalog::lock_class, op.id);
      op.status = "interrupted";
    }
  });
}

OpStatus Engine::status(const std::string& op_id) {
  if (!valid_uuid(op_id)) throw usage_error("'" + op_id + "' is not an operation id", "`shardctl op list` shows them");
  std::optional<OpStatus> out;
  catalog_.read([&](pqxx::work& tx) {
    auto r = tx.exec_params(std::string(op_select) + "WHERE o.op_id = $1", op_id);
    if (!r.empty()) out = op_from(r[0]);
  });
  if (out) mark_interrupted(catalog_, *out);
  if (!out) throw usage_error("no operation " + op_id, "`shardctl op list` shows the operations");
  return *out;
}

std::vector<OpStatus> Engine::list() {
  std::vector<OpStatus> out;
  catalog_.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec(std::string(op_select) + "ORDER BY o.created_at DESC")) out.push_back(op_from(r));
  });
  for (auto& op : out) mark_interrupted(catalog_, op);
  return out;
}

}  // namespace shardctl::migrate
