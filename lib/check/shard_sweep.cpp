#include "check/shard_sweep.hpp"

#include <algorithm>
#include <mutex>

#include "catalog/names.hpp"
#include "check/cascade.hpp"
#include "check/predicates.hpp"
#include "check/replication_leftovers.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "fault/fault.hpp"
#include "journal/journal.hpp"
#include "shardio/shard_schema.hpp"
#include "shardside/guard.hpp"
#include "shardside/names.hpp"
#include "shardside/replication.hpp"

namespace shardctl::check {
namespace {

using catalog::quote_ident;
using catalog::quote_qualified;

std::vector<std::string> prefixed(const std::string& alias, const std::vector<std::string>& cols) {
  std::vector<std::string> out;
  for (const auto& c : cols) out.push_back(alias + "." + quote_ident(c));
  return out;
}

// The rows `pred` selects from `quoted` t0: their count, a second count of those also matching
// `also` ("true" when not needed), and the first `sample` keys in `order` order, in ONE scan:
// the window counts see every row before the top-N sort keeps a few (the server spills the
// window to disk past work_mem, so memory stays bounded).
struct Counted {
  std::int64_t count = 0;
  std::int64_t also = 0;
};
Counted count_and_sample(shardio::RawConn& c, const std::string& quoted, const std::string& pred,
                         const std::vector<std::string>& order, const std::string& also, int sample,
                         std::vector<std::string>& samples) {
  auto rows = c.query("SELECT concat_ws(',', " + join(order, ", ") + "), count(*) OVER (), count(*) FILTER (WHERE " +
                      also + ") OVER () FROM " + quoted + " t0 WHERE " + pred + " ORDER BY " + join(order, ", ") +
                      " LIMIT " + std::to_string(std::max(sample, 1)));
  Counted out;
  if (rows.empty()) return out;
  out.count = std::stoll(rows[0][1]);
  out.also = std::stoll(rows[0][2]);
  for (auto& r : rows) keep_sample(samples, r[0], sample);
  return out;
}

}  // namespace

void keep_sample(std::vector<std::string>& samples, std::string key, int limit) {
  if (limit <= 0) return;
  auto it = std::lower_bound(samples.begin(), samples.end(), key);
  if (it != samples.end() && *it == key) return;
  if (static_cast<int>(samples.size()) >= limit && it == samples.end()) return;
  samples.insert(it, std::move(key));
  if (static_cast<int>(samples.size()) > limit) samples.pop_back();
}

namespace {
// Thrown when the catalog changed under a pass in a way its view did not exclude.
struct ViewMoved {};

// Fault point "check.shard" (SHARDCTL_FAULT_PAUSE=check.shard:N stops the process before its
// N-th shard), counted across sweep threads, so tests can move data between two shards' sweeps.
void fault_point(std::string_view step) {
  static std::mutex mutex;
  static fault::FaultInjector faults;
  std::lock_guard<std::mutex> lock(mutex);
  faults.point(step);
}
}  // namespace

ShardSweep::ShardSweep(const catalog::Shard& shard, const Options& options, std::shared_ptr<const Fleet> initial,
                       CatalogViews& views, shardio::ServerPool& pool)
    : shard_(shard), options_(options), initial_(std::move(initial)), views_(views), pool_(pool) {}

std::shared_ptr<const Fleet> ShardSweep::read_view(const std::shared_ptr<const Fleet>& earlier) {
  auto view = views_.current();
  if (view == earlier) return view;
  bool carry = std::any_of(earlier->excluded_ranges.begin(), earlier->excluded_ranges.end(), [&](const auto& e) {
    return !view->excluded_ops.count(e.first) && view->maps.count(e.second.first);
  });
  if (!carry) return view;
  // A view of its own (a Fleet's routers are not copied): read again, with the exclusions added.
  auto carried = std::make_shared<Fleet>(views_.load());
  carry_exclusions(*earlier, *carried);
  return carried;
}

shardio::RawConn& ShardSweep::conn() {
  if (!conn_) conn_.emplace(pool_.acquire(shard_.dsn, "shard " + shard_.name));
  return **conn_;
}

std::optional<shardio::ServerPool::Lease> ShardSweep::probe_conn(const std::string& name) {
  if (down_.count(name)) return std::nullopt;
  const catalog::Shard* s = view_->shard(name);
  // A shard marked offline is not expected to answer: its children stay unverified, and the
  // mapping to it is a finding of its own (mapping_offline_shard), not an unreachable shard.
  if (!s || s->status == catalog::ShardStatus::offline) return std::nullopt;
  try {
    return pool_.acquire(s->dsn, "shard " + name);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unavailable) throw;
    down_.insert(name);
    out_.unreachable.push_back({name, e.what(), refused_for_connections(e)});
    return std::nullopt;
  }
}

bool ShardSweep::present(shardio::RawConn& c, const std::string& table) {
  return c.query("SELECT to_regclass($1) IS NOT NULL", {quote_qualified(table)})[0][0] == "t";
}

// A pass sweeps the shard with the catalog as it was read just before (routing, and the key
// ranges of every operation live or touched since the check began, which it leaves out). Read
// again after the pass (and before every fix batch): if an operation appeared that the pass
// did not leave out, or mappings outside the left-out ranges changed, the pass may have seen
// rows mid-move under the wrong routing, so its findings are dropped and the shard is swept
// again under the new view. After max_sweep_passes the shard's row results are given up as
// not determined rather than reported. Fixes already made stay made: each ran under a view
// re-read just before its batch, on keys no operation touched.
ShardOutcome ShardSweep::run() {
  fault_point("check.shard");
  conn();
  for (int pass = 1;; ++pass) {
    view_ = read_view(pass == 1 ? initial_ : view_);
    out_.findings.clear();
    out_.unreachable.clear();
    missing_.clear();
    anywhere_.clear();
    down_.clear();
    bool moved = false;
    try {
      sweep_pass();
      auto after = read_view(view_);
      moved = after != view_ && fleet_moved(*view_, *after);
    } catch (const ViewMoved&) {
      moved = true;
      // The cursor transaction of an orphan sweep may still be open.
      try {
        conn().exec("ROLLBACK");
      } catch (...) {
      }
    }
    if (!moved) return std::move(out_);
    if (pass >= max_sweep_passes) {
      std::erase_if(out_.findings, [](const Finding& f) { return f.kind == Kind::orphans || f.kind == Kind::strays; });
      out_.undetermined.push_back(
          {shard_.name, "operations or mappings changed under " + std::to_string(pass) +
                            " passes over this shard; its orphans and strays are not reported: run the check again"});
      return std::move(out_);
    }
  }
}

void ShardSweep::sweep_pass() {
  check_tables();
  if (options_.strays)
    for (const auto& t : view_->sharded_tables)
      if (!missing_.count(t.name)) sweep_strays(t);
  if (options_.orphans)
    for (const auto& x : view_->xrefs) sweep_orphans(x);
  if (options_.map_consistency) {
    sweep_guards();
    sweep_replication();
  }
}

void ShardSweep::recheck_view() {
  auto after = read_view(view_);
  if (after != view_ && fleet_moved(*view_, *after)) throw ViewMoved{};
}

std::string ShardSweep::settled(shardio::RawConn& c, const std::string& map, const std::string& quoted_column) {
  auto it = view_->in_flight.find(map);
  if (it == view_->in_flight.end() || it->second.empty() || !view_->maps.count(map)) return "true";
  return "NOT " + in_ranges(c, view_->map(map), quoted_column, it->second);
}

void ShardSweep::check_tables() {
  for (const auto& t : view_->sharded_tables) {
    if (present(conn(), t.name)) continue;
    missing_.insert(t.name);
    // A table only has to exist where its map routes keys.
    if (!view_->map_uses_shard(*t.map, shard_.name)) continue;
    Finding f;
    f.kind = Kind::missing_table;
    f.shard = shard_.name;
    f.table = t.name;
    f.object = *t.map;
    f.count = 1;
    f.detail = "sharded table of map " + *t.map + " is missing on this shard";
    out_.findings.push_back(std::move(f));
  }
}

void ShardSweep::fix_rows(const std::string& table, const std::string& quoted_table, const std::string& predicate,
                          const std::vector<std::string>& params, const std::string& why) {
  if (options_.fix != FixMode::quarantine && options_.fix != FixMode::remove) return;
  auto how = options_.fix == FixMode::quarantine ? Removal::quarantine : Removal::remove;
  // A connection of its own (the sweep's may hold a cursor), given back after the batch.
  auto fix_conn = pool_.acquire(shard_.dsn, "shard " + shard_.name);
  auto moved = take_out(*fix_conn, RowSet{quoted_table, predicate, params}, how, options_.dry_run, options_.probe_batch,
                        [this] { recheck_view(); });
  fix_conn.release();
  for (const auto& t : moved) {
    FixAction a;
    a.action = options_.fix == FixMode::quarantine ? FixKind::quarantine : FixKind::remove;
    a.shard = shard_.name;
    a.table = t.table;
    a.rows = t.rows;
    a.dry_run = options_.dry_run;
    a.detail = t.table == table ? why : "rows referencing them (foreign key)";
    if (t.rows == 0 && t.table != table) continue;
    // Batches of one finding add up to one line per table, not one per round trip.
    auto same = std::find_if(out_.fixes.begin(), out_.fixes.end(), [&](const FixAction& f) {
      return f.action == a.action && f.shard == a.shard && f.table == a.table && f.detail == a.detail;
    });
    if (same != out_.fixes.end()) same->rows += a.rows;
    else out_.fixes.push_back(std::move(a));
  }
}

void ShardSweep::sweep_strays(const catalog::TableDef& table) {
  auto& c = conn();
  const auto& map = view_->map(*table.map);
  std::string quoted = quote_qualified(table.name);
  std::string key = "t0." + quote_ident(*table.key_column);
  auto flying = view_->in_flight.find(map.map.name);
  // Keys of operations in flight are left out: a live move has them on two shards.
  std::string pred = stray_predicate(c, map, key, shard_.name,
                                     flying == view_->in_flight.end() ? std::vector<routing::KeyRange>{} : flying->second);
  auto pk = shardio::primary_key(c, quoted);
  if (pk.empty()) pk = {*table.key_column};
  // The keys any shard is routed: the same for every table of the map keyed by this column.
  auto& anywhere = anywhere_[{map.map.name, key}];
  if (anywhere.empty()) anywhere = mapped_predicate(c, map, key, [](const catalog::Mapping&) { return true; });
  Finding f;
  auto counted = count_and_sample(c, quoted, pred, prefixed("t0", pk), "NOT " + anywhere, options_.sample, f.samples);
  std::int64_t n = counted.count, nowhere = counted.also;
  if (n == 0) return;
  f.kind = Kind::strays;
  f.shard = shard_.name;
  f.table = table.name;
  f.object = *table.map;
  f.count = n;
  f.detail = std::to_string(n - nowhere) + " routed to another shard, " + std::to_string(nowhere) +
             " routed to no shard (samples: " + join(pk, ",") + ")";
  out_.findings.push_back(std::move(f));
  fix_rows(table.name, quoted, pred, {}, "strays of map " + *table.map);
}

// Child keys (column-wise) waiting for one probe round trip.
struct ShardSweep::KeyBatch {
  std::vector<std::vector<std::string>> columns;
  std::size_t size() const { return columns.empty() ? 0 : columns[0].size(); }
  void add(const std::vector<std::string>& row, std::size_t from) {
    if (columns.empty()) columns.resize(row.size() - from);
    for (std::size_t i = from; i < row.size(); ++i) columns[i - from].push_back(row[i]);
  }
  void clear() { columns.clear(); }
};

// One xref's orphan sweep on this shard: its SQL pieces (child rows as t0, parent rows as p,
// probed keys as k(c0, c1, ...)) and what it has counted.
struct ShardSweep::OrphanScan {
  OrphanScan(const catalog::Xref& xref, const catalog::LoadedMap& routed_by) : x(xref), map(routed_by) {}

  const catalog::Xref& x;
  const catalog::LoadedMap& map;
  std::string child, parent;            // quoted tables
  std::vector<std::string> child_cols;  // t0."col", ...
  std::string route;                    // t0."route column"
  std::string here;                     // rows this shard owns: their route column routes here
  std::string quiet;                    // rows no operation in flight moves, nor their parent key
  std::string candidates;               // "<child columns> IS NOT NULL AND <quiet> AND "
  std::vector<std::string> types;       // the child columns' types: the probes' arrays
  std::string unnest, k_alias;          // unnest($1::type[], ...) AS k(c0, ...)
  std::vector<std::string> k_cols;      // k.c0, ...
  std::string fix_pred;                 // quiet t0 rows whose keys the text arrays $1, $2, ... hold
  Finding finding;
  std::int64_t within = 0, across = 0, nowhere = 0, unverified = 0;

  // The parent row of ALIAS's keys: "p.a = t0.x AND ..." (t0: the child's columns; k: c0, c1, ...).
  std::string parent_match(const std::string& alias) const {
    std::string m;
    for (std::size_t i = 0; i < x.child_columns.size(); ++i)
      m += std::string(i ? " AND " : "") + "p." + quote_ident(x.parent_columns[i]) + " = " + alias + "." +
           (alias == "t0" ? quote_ident(x.child_columns[i]) : "c" + std::to_string(i));
    return m;
  }
  std::string unrouted_why() const { return "orphans of xref " + x.name + " (key routed to no shard)"; }
};

// Child rows of one xref whose parent row is missing: within the shard by one anti-join over
// the rows it owns; across shards by streaming the keys it does not own, routing each, and
// probing the parent's shard in batches.
void ShardSweep::sweep_orphans(const catalog::Xref& x) {
  auto& c = conn();
  if (missing_.count(x.child_table) || !present(c, x.child_table)) return;
  OrphanScan scan = start_orphan_scan(c, x);
  orphans_within(c, scan);
  prepare_probes(c, scan);
  orphans_across(c, scan);
  report_orphans(scan);
}

ShardSweep::OrphanScan ShardSweep::start_orphan_scan(shardio::RawConn& c, const catalog::Xref& x) {
  OrphanScan s(x, view_->map(x.map));
  s.child = quote_qualified(x.child_table);
  s.parent = quote_qualified(x.parent_table);
  s.child_cols = prefixed("t0", x.child_columns);
  s.route = "t0." + quote_ident(x.route_column);
  std::string not_null;
  for (const auto& col : s.child_cols) not_null += col + " IS NOT NULL AND ";
  s.here = routed_to(c, s.map, s.route, shard_.name);
  // Left out: children whose parent key an operation in flight moves (the parent may be on
  // either shard), and children an operation moves themselves (keyed by their own table's map).
  s.quiet = settled(c, x.map, s.route);
  auto child_def = std::find_if(view_->sharded_tables.begin(), view_->sharded_tables.end(),
                                [&](const catalog::TableDef& t) { return t.name == x.child_table; });
  if (child_def != view_->sharded_tables.end() && child_def->map && child_def->key_column)
    s.quiet += " AND " + settled(c, *child_def->map, "t0." + quote_ident(*child_def->key_column));
  s.candidates = not_null + s.quiet + " AND ";
  s.finding.kind = Kind::orphans;
  s.finding.shard = shard_.name;
  s.finding.table = x.child_table;
  s.finding.object = x.name;
  return s;
}

// Within the shard: one anti-join over the rows this shard owns.
void ShardSweep::orphans_within(shardio::RawConn& c, OrphanScan& s) {
  const auto& x = s.x;
  if (missing_.count(x.parent_table) || !present(c, x.parent_table)) return;
  std::string pred =
      s.candidates + s.here + " AND NOT EXISTS (SELECT 1 FROM " + s.parent + " p WHERE " + s.parent_match("t0") + ")";
  s.within = count_and_sample(c, s.child, pred, s.child_cols, "true", options_.sample, s.finding.samples).count;
  if (s.within > 0) fix_rows(x.child_table, s.child, pred, {}, "orphans of xref " + x.name + " (within the shard)");
}

// The probes' SQL: the child key columns' types here (a column missing is an error), the arrays
// the keys travel in, and the predicate that fixes take probed orphans by.
void ShardSweep::prepare_probes(shardio::RawConn& c, OrphanScan& s) {
  const auto& x = s.x;
  auto columns = shardio::table_columns(c, s.child);
  for (const auto& name : x.child_columns) {
    auto it = std::find_if(columns.begin(), columns.end(), [&](const shardio::Column& col) { return col.name == name; });
    if (it == columns.end())
      throw usage_error("xref " + x.name + ": column " + name + " is missing from " + x.child_table + " on shard " +
                        shard_.name);
    s.types.push_back(it->type);
  }
  s.unnest = "unnest(";
  for (std::size_t i = 0; i < s.types.size(); ++i)
    s.unnest += (i ? ", $" : "$") + std::to_string(i + 1) + "::" + s.types[i] + "[]";
  s.unnest += ")";
  for (std::size_t i = 0; i < s.types.size(); ++i) s.k_cols.push_back("k.c" + std::to_string(i));
  s.k_alias = "k(";
  for (std::size_t i = 0; i < s.types.size(); ++i) s.k_alias += (i ? ", c" : "c") + std::to_string(i);
  s.k_alias += ")";
  s.fix_pred = s.quiet + " AND (" + join(s.child_cols, ", ") + ") IN (SELECT * FROM " + s.unnest + ")";
}

// Across shards: the keys of the child rows this shard does not own, streamed by a cursor in
// one read-only snapshot, each routed and probed on its parent's shard in batches; a key the map
// routes to no shard is an orphan without a probe.
void ShardSweep::orphans_across(shardio::RawConn& c, OrphanScan& s) {
  std::map<std::string, KeyBatch> pending;  // by parent shard
  c.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    std::vector<std::string> casts{s.route + "::text"};
    for (const auto& col : s.child_cols) casts.push_back(col + "::text");
    c.exec("DECLARE shardctl_check_keys NO SCROLL CURSOR FOR SELECT " + join(casts, ", ") + " FROM " + s.child +
           " t0 WHERE " + s.candidates + s.route + " IS NOT NULL AND NOT " + s.here);
    KeyBatch unrouted;
    for (;;) {
      auto rows = c.query("FETCH " + std::to_string(options_.probe_batch) + " FROM shardctl_check_keys");
      if (rows.empty()) break;
      route_keys(s, rows, pending, unrouted);
      if (static_cast<int>(unrouted.size()) >= options_.probe_batch) {
        record_orphans(s, unrouted.columns, s.nowhere, s.unrouted_why());
        unrouted.clear();
      }
    }
    for (auto& [target, batch] : pending) probe_parents(s, target, batch);
    record_orphans(s, unrouted.columns, s.nowhere, s.unrouted_why());
    c.exec("COMMIT");
  } catch (...) {
    try {
      c.exec("ROLLBACK");
    } catch (...) {  // connection lost: the server rolled back
    }
    throw;
  }
}

// Fetched rows (route value, then the child columns) into their parent shard's batch, probed
// once full, or into `unrouted`.
void ShardSweep::route_keys(OrphanScan& s, const std::vector<std::vector<std::string>>& rows,
                            std::map<std::string, KeyBatch>& pending, KeyBatch& unrouted) {
  for (const auto& r : rows) {
    // A value that does not parse as the map's key type routes nowhere, like an unmapped one.
    std::optional<routing::Route> routed;
    try {
      routed = s.map.router->route_text(r[0]);
    } catch (const Error&) {
    }
    if (!routed || routed->shard_index < 0) {
      unrouted.add(r, 1);
      continue;
    }
    const std::string& target = s.map.shards[static_cast<std::size_t>(routed->shard_index)].name;
    auto& batch = pending[target];
    batch.add(r, 1);
    if (static_cast<int>(batch.size()) >= options_.probe_batch) probe_parents(s, target, batch);
  }
}

// One round trip to `target`: the batch's keys that have no parent row there. A parent shard
// that is down, or lacks the parent table, leaves the batch not verified.
void ShardSweep::probe_parents(OrphanScan& s, const std::string& target, KeyBatch& batch) {
  if (batch.size() == 0) return;
  auto pc = probe_conn(target);
  if (!pc || !present(**pc, s.x.parent_table)) {
    s.unverified += static_cast<std::int64_t>(batch.size());
    batch.clear();
    return;
  }
  std::vector<std::string> params;
  for (const auto& col : batch.columns) params.push_back(catalog::text_array_literal(col));
  std::vector<std::string> casts;
  for (const auto& k : s.k_cols) casts.push_back(k + "::text");
  auto rows = (*pc)->query("SELECT " + join(casts, ", ") + " FROM " + s.unnest + " AS " + s.k_alias +
                               " WHERE NOT EXISTS (SELECT 1 FROM " + s.parent + " p WHERE " + s.parent_match("k") + ")",
                           params);
  pc.reset();  // given back before a fix takes a connection of its own
  std::vector<std::vector<std::string>> orphan_columns(s.types.size());
  for (auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) orphan_columns[i].push_back(std::move(r[i]));
  batch.clear();
  record_orphans(s, orphan_columns, s.across, "orphans of xref " + s.x.name + " (parent on shard " + target + ")");
}

// Orphans found by key (column-wise): counted in `counter`, sampled, and fixed by their keys.
void ShardSweep::record_orphans(OrphanScan& s, const std::vector<std::vector<std::string>>& orphan_columns,
                                std::int64_t& counter, const std::string& why) {
  std::size_t n = orphan_columns.empty() ? 0 : orphan_columns[0].size();
  if (n == 0) return;
  counter += static_cast<std::int64_t>(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::string key;
    for (std::size_t col = 0; col < orphan_columns.size(); ++col) key += (col ? "," : "") + orphan_columns[col][r];
    keep_sample(s.finding.samples, std::move(key), options_.sample);
  }
  std::vector<std::string> params;
  for (const auto& col : orphan_columns) params.push_back(catalog::text_array_literal(col));
  fix_rows(s.x.child_table, s.child, s.fix_pred, params, why);
}

void ShardSweep::report_orphans(OrphanScan& s) {
  auto& f = s.finding;
  f.count = s.within + s.across + s.nowhere;
  f.detail = std::to_string(s.within) + " within the shard, " + std::to_string(s.across) + " across shards, " +
             std::to_string(s.nowhere) + " routed to no shard";
  if (s.unverified > 0)
    f.detail += "; " + std::to_string(s.unverified) + " child rows not verified (parent shard unreachable)";
  if (f.count > 0) out_.findings.push_back(std::move(f));
}

namespace {

// What a guard range left behind is; one finding per operation and kind, in this order, so each
// names what to run.
enum class GuardLeftover { offline_range, unknown_fence, expired_fence };

// The leftover a range is, with the finding's detail; none for a range that is expected: an
// offline range of a live operation, or a fence within its expiry after a move.
std::optional<std::pair<GuardLeftover, std::string>> guard_leftover(
    const shardside::GuardRange& r, const std::map<std::string, journal::OperationStatus>& status) {
  auto st = status.find(r.op_id);
  bool known = st != status.end();
  bool over = known && journal::is_over(st->second);
  if (r.state == shardside::GuardState::offline) {
    if (known && !over) return std::nullopt;
    return std::pair{GuardLeftover::offline_range,
                     "offline key ranges of an operation that is " +
                         std::string(known ? journal::to_text(st->second) : "unknown") + ": writes to those keys are refused"};
  }
  if (!known)
    return std::pair{GuardLeftover::unknown_fence,
                     std::string("fenced key ranges of an operation the catalog does not know: writes to those keys are refused")};
  if (r.expired)
    return std::pair{GuardLeftover::expired_fence,
                     "fences past their expiry (" + r.expires_at.value_or("") +
                         ") still refuse writes to those keys; lift them with `shardctl op unfence " + r.op_id + "`"};
  return std::nullopt;  // a fence after a move: expected until the operator lifts it
}

// Each operation's status from the catalog: op id -> status; absent: unknown to the catalog.
std::map<std::string, journal::OperationStatus> operation_statuses(pg::Connection& catalog,
                                                                  const std::vector<std::string>& ids) {
  std::map<std::string, journal::OperationStatus> status;
  if (!ids.empty())
    catalog.read([&](pqxx::work& tx) {
      for (const auto& r : tx.exec_params("SELECT op_id::text, status FROM shardctl.operations WHERE op_id = ANY($1::uuid[])",
                                          catalog::text_array_literal(ids)))
        status[r[0].as<std::string>()] = read_word<journal::OperationStatus>(r[1].as<std::string>());
    });
  return status;
}

}  // namespace

// The shard side of guards (schema shardctl, on shards that were ever a move's source):
// shardctl.guard_ranges rows, 'offline' while a batch moves and 'fenced' once it moved away,
// and the triggers shardctl_guard* (row, statement and truncate, or the light route trigger
// alone) on sharded tables. A fence is expected after a move; what is left over is an offline
// range whose operation is over or unknown, a fence of an unknown operation or past its expiry,
// and a trigger, the light one too, on a table whose map has no guarded range and no route
// floor on this shard (a floor is checked by the light trigger: lib/migrate/guard.hpp).
void ShardSweep::sweep_guards() {
  auto& c = conn();
  auto ranges = shardside::guard_ranges(c);
  std::set<std::string> guarded_maps;  // map ids with ranges or a route floor here
  for (const auto& r : ranges) guarded_maps.insert(std::to_string(r.map_id));
  for (const auto& f : shardside::route_floors(c)) guarded_maps.insert(std::to_string(f.map_id));
  // A live operation owns its map's triggers before it guards any range (an online move installs
  // them before its cut-over; a run killed there is resumed or cancelled, and that removes them).
  for (const auto& [op, map_range] : view_->excluded_ranges)
    if (view_->maps.count(map_range.first)) guarded_maps.insert(std::to_string(view_->map(map_range.first).map.id));
  leftover_ranges(ranges);
  leftover_triggers(c, guarded_maps);
}

void ShardSweep::leftover_ranges(const std::vector<shardside::GuardRange>& ranges) {
  std::vector<std::string> ids;
  for (const auto& r : ranges)
    if (ids.empty() || ids.back() != r.op_id) ids.push_back(r.op_id);
  std::map<std::string, journal::OperationStatus> status;
  views_.with_catalog([&](pg::Connection& catalog) { status = operation_statuses(catalog, ids); });
  std::map<std::pair<std::string, GuardLeftover>, Finding> found;
  for (const auto& r : ranges) {
    auto leftover = guard_leftover(r, status);
    if (!leftover) continue;
    auto& f = found[{r.op_id, leftover->first}];
    f.kind = Kind::leftover_guard;
    f.shard = shard_.name;
    f.object = "guard ranges of operation " + r.op_id;
    f.detail = leftover->second;
    ++f.count;
    keep_sample(f.samples,
                "#" + std::to_string(r.batch_no) + " " + r.lo.value_or("") + ".." + r.hi.value_or("") +
                    (r.state == shardside::GuardState::fenced ? " -> " + r.new_shard : ""),
                options_.sample);
  }
  for (auto& [key, f] : found) out_.findings.push_back(std::move(f));
}

// Guard triggers on tables whose map has no guarded range nor route floor here (or that no map
// declares).
void ShardSweep::leftover_triggers(shardio::RawConn& c, const std::set<std::string>& guarded_maps) {
  // Which map each sharded table here belongs to, by table oid.
  std::map<std::string, const catalog::TableDef*> by_oid;
  for (const auto& t : view_->sharded_tables) {
    auto oid = c.query("SELECT coalesce(to_regclass($1)::oid::text, '')", {quote_qualified(t.name)})[0][0];
    if (!oid.empty()) by_oid[oid] = &t;
  }
  std::string guard_triggers;
  for (const char* name : shardside::guard_triggers) guard_triggers += (guard_triggers.empty() ? "" : ", ") + c.literal(name);
  for (auto& r : c.query("SELECT cl.oid::text, n.nspname || '.' || cl.relname, t.tgname FROM pg_trigger t "
                         "JOIN pg_class cl ON cl.oid = t.tgrelid JOIN pg_namespace n ON n.oid = cl.relnamespace "
                         "WHERE t.tgname IN (" + guard_triggers + ") AND NOT t.tgisinternal AND t.tgparentid = 0 "
                         "ORDER BY 2, 3")) {
    auto def = by_oid.find(r[0]);
    std::string map_id;
    if (def != by_oid.end() && def->second->map && view_->maps.count(*def->second->map))
      map_id = std::to_string(view_->map(*def->second->map).map.id);
    if (!map_id.empty() && guarded_maps.count(map_id)) continue;
    Finding f;
    f.kind = Kind::leftover_guard;
    f.shard = shard_.name;
    f.table = r[1];
    f.object = "trigger " + r[2];
    f.count = 1;
    f.detail = map_id.empty() ? "write guard trigger on a table no map of the catalog declares"
                              : "write guard trigger, but map " + *def->second->map +
                                    " has no guarded key ranges and no route floor on this shard";
    out_.findings.push_back(std::move(f));
  }
}

// shardctl's replication objects on this shard (online moves' publications, slots and
// subscriptions) that no live operation owns. The runner journals its operation before it
// creates an object and drops the object before the operation ends, so the statuses are read
// after the listing: an object made meanwhile has a live operation by then. An operation live
// when this pass's view was read, or touched since the check began, is left out like its keys:
// the next run looks again.
void ShardSweep::sweep_replication() {
  auto objects = shardside::list_replication_objects(conn());
  if (objects.empty()) return;
  std::vector<std::string> ids;
  for (const auto& o : objects) ids.push_back(o.owner.op_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::map<std::string, journal::OperationStatus> status;
  views_.with_catalog([&](pg::Connection& catalog) { status = operation_statuses(catalog, ids); });
  for (const auto& o : objects) {
    const auto& id = o.owner.op_id;
    if (view_->live_ops.count(id) || view_->excluded_ops.count(id)) continue;
    auto st = status.find(id);
    auto f = replication_leftover(shard_.name, o, st == status.end() ? std::nullopt : std::optional(st->second));
    if (f) out_.findings.push_back(std::move(*f));
  }
}

}  // namespace shardctl::check
