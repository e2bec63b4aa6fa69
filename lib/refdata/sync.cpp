#include "refdata/sync.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "fault/fault.hpp"
#include "refdata/copy.hpp"
#include "shardio/row_checksum.hpp"

namespace shardctl::refdata {
namespace {

using shardio::RawConn;
using shardio::row_alias;

// Fault point of a shard's sync (lib/fault/fault.hpp), its context the target shard:
// "references.sync.commit" once the shard's changes are made and verified, just before its
// COMMIT, with its copies locked and its sources' snapshots open (tests stop the process there:
// tests/integration/t_sync_reference.sh, t_sync_reference_writer.sh, t_move_references.sh).
// Shards sync on several threads: one injector, its calls serialized.
void fault_point(std::string_view step, std::string_view shard) {
  static std::mutex mutex;
  static fault::FaultInjector faults;
  std::lock_guard<std::mutex> lock(mutex);
  faults.point(step, shard);
}

// A shard is refused: its transaction is rolled back and the reason reported (exit 64).
struct Refusal {
  std::string why;
};

std::string joined(const std::vector<std::string>& items, const std::string& prefix) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + prefix + i;
  return out;
}

// "(a.x, a.y) = (b.x, b.y)" over quoted columns.
std::string same_row(const std::string& a, const std::vector<std::string>& ca, const std::string& b,
                     const std::vector<std::string>& cb) {
  return "(" + joined(ca, a + ".") + ") = (" + joined(cb, b + ".") + ")";
}

// A foreign key into a table, from another table.
struct IncomingFk {
  std::string name, child;                 // child: quoted, schema-qualified
  std::string child_oid;
  std::vector<std::string> child_columns;  // quoted, paired with parent_columns
  std::vector<std::string> parent_columns;
};

std::vector<IncomingFk> incoming_fks(RawConn& conn, const std::string& quoted_table) {
  std::vector<IncomingFk> out;
  auto rows = conn.query(
      "SELECT c.conname, format('%I.%I', n.nspname, r.relname), c.conrelid::oid::text, quote_ident(ca.attname), "
      "quote_ident(pa.attname), c.oid::text "
      "FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace "
      "CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(ck, pk, ord) "
      "JOIN pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = k.ck "
      "JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = k.pk "
      "WHERE c.contype = 'f' AND c.confrelid = $1::regclass ORDER BY c.oid, k.ord",
      {quoted_table});
  std::string last;
  for (auto& r : rows) {
    if (r[5] != last) out.push_back({r[0], r[1], r[2], {}, {}}), last = r[5];
    out.back().child_columns.push_back(r[3]);
    out.back().parent_columns.push_back(r[4]);
  }
  return out;
}

// One table's sync on one shard.
struct Work {
  const RefTable* table;
  RawConn* source;
  Shape shape;
  KeySpec key;
  std::vector<std::string> columns;  // quoted, the non-generated ones
  Chunking chunking;                 // range chunks' bounds sampled on the source
  ChunkDigests wanted;               // the source's digests
  std::vector<std::int64_t> differing;
  std::string staged;                // temporary table of the source's rows of those chunks
  TableChange change;
};

// The SQL text expression that gives range chunks' bounds in a statement that takes no
// parameters (COPY) or that shardctl runs without (CREATE TABLE AS): the bounds are bound to
// set_config, a setting of `conn`'s open transaction, and read back by current_setting; in an
// index condition the server reads it once per scan. Empty for hash chunks.
std::string bind_bounds(RawConn& conn, const Chunking& chunking) {
  if (!chunking.by_range()) return "";
  conn.query("SELECT set_config('shardctl.chunk_bounds', $1, true)", {chunking.bounds});
  return "current_setting('shardctl.chunk_bounds')";
}

std::vector<std::string> returned_keys(RawConn& conn, const std::string& sql) {
  std::vector<std::string> out;
  for (auto& r : conn.query(sql)) out.push_back(r[0]);
  std::sort(out.begin(), out.end());
  return out;
}

class ShardSyncer {
 public:
  ShardSyncer(RawConn& target, const std::string& target_name, const SyncOptions& options)
      : target_(target), name_(target_name), options_(options) {}

  // Plans, stages and applies every table's changes in the open transaction; throws Refusal.
  std::vector<TableChange> run(std::vector<Work>& works) {
    std::vector<std::string> order;
    for (auto& w : works) order.push_back(w.table->quoted);
    order = parents_first(order, references(order));
    std::vector<Work*> ordered;
    for (const auto& q : order)
      for (auto& w : works)
        if (w.table->quoted == q) ordered.push_back(&w);
    int n = 0;
    for (auto* w : ordered) prepare(*w, n++);
    for (auto* w : ordered) insert(*w);
    for (auto* w : ordered) update(*w);
    for (auto it = ordered.rbegin(); it != ordered.rend(); ++it) remove(**it, order);
    std::vector<TableChange> out;
    for (auto* w : ordered) {
      if (w->differing.empty()) continue;
      auto now = chunk_digests(target_, w->table->quoted, w->key, w->chunking);
      if (now != w->wanted)
        throw internal_error("the copy of " + w->table->name + " on " + name_ +
                             " still differs from the source after the sync; it was rolled back");
      out.push_back(w->change);
    }
    return out;
  }

 private:
  // (child, parent) pairs among `tables`, by the target's foreign keys.
  std::vector<std::pair<std::string, std::string>> references(const std::vector<std::string>& tables) {
    std::map<std::string, std::string> by_oid;
    for (const auto& t : tables) by_oid[target_.query("SELECT $1::regclass::oid::text", {t})[0][0]] = t;
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& r : target_.query("SELECT conrelid::oid::text, confrelid::oid::text FROM pg_constraint WHERE contype = 'f'"))
      if (by_oid.count(r[0]) && by_oid.count(r[1])) out.emplace_back(by_oid[r[0]], by_oid[r[1]]);
    return out;
  }

  void prepare(Work& w, int n) {
    const auto& t = *w.table;
    Shape mine = read_shape(target_, t.quoted);
    w.shape = read_shape(*w.source, t.quoted);
    if (!w.shape.exists) throw Refusal{t.name + " is missing on the source " + w.change.source};
    if (!(mine == w.shape))
      throw Refusal{t.name + " has other columns than on the source " + w.change.source + " (" + mine.column_list() +
                    "; the source's: " + w.shape.column_list() + "); `shardctl check --references` reports it as drift"};
    if (!options_.dry_run) target_.exec("LOCK TABLE " + t.quoted + " IN EXCLUSIVE MODE");
    for (const auto& c : w.shape.columns) w.columns.push_back(target_.identifier(c.name));
    find_differing(w, mine);
    if (w.differing.empty()) return;
    if (w.key.by_row() && !options_.allow_no_pk)
      throw Refusal{t.name + " has no primary key and its copy differs from the source " + w.change.source +
                    "; pass --allow-no-pk to replace the whole table"};
    w.change.replaced = w.key.by_row();
    stage(w, n);
  }

  // The chunks of the target's copy that differ from the source's: none when the whole-table
  // digests agree (no chunk digests taken then), as check --references compares (compare.hpp),
  // the chunking decided on the source (range chunks' bounds sampled there, plan.hpp).
  void find_differing(Work& w, const Shape& mine) {
    const auto& t = *w.table;
    bool numerics_alike = !has_numeric(mine) || numeric_probe(*w.source) == numeric_probe(target_);
    w.key = key_spec(target_, not_null_in_both(w.shape, mine), numerics_alike);
    std::int64_t source_rows = estimate_rows(*w.source, t.quoted);
    std::int64_t chunks = chunk_count(std::max(source_rows, estimate_rows(target_, t.quoted)));
    if (whole_digest(*w.source, t.quoted, w.key) == whole_digest(target_, t.quoted, w.key)) return;
    w.chunking = plan_chunks(*w.source, t.quoted, w.key, chunks, source_rows);
    w.wanted = chunk_digests(*w.source, t.quoted, w.key, w.chunking);
    w.differing = differing_chunks(w.wanted, chunk_digests(target_, t.quoted, w.key, w.chunking));
  }

  // The source's rows of the differing chunks (all of them to replace a table without a key),
  // copied into a temporary table.
  void stage(Work& w, int n) {
    const auto& t = *w.table;
    std::string cols = joined(w.columns, "");
    w.staged = "shardctl_refsync_" + std::to_string(n);
    target_.exec("CREATE TEMPORARY TABLE " + w.staged + " ON COMMIT DROP AS SELECT " + cols + " FROM " + t.quoted +
                 " WITH NO DATA");
    // The chunk numbers are shardctl's own integers: written into the statement, not bound;
    // range chunks' bounds are bound (bind_bounds), and their rows read through the key's index.
    std::string where = w.change.replaced
                            ? ""
                            : " WHERE " + chunks_where(w.key, w.chunking, w.differing, bind_bounds(*w.source, w.chunking));
    shardio::pump_copy(*w.source, "COPY (SELECT " + cols + " FROM " + t.quoted + " AS " + row_alias + where + ") TO STDOUT",
                       target_, "COPY " + w.staged + " (" + cols + ") FROM STDIN");
  }

  void insert(Work& w) {
    if (w.differing.empty()) return;
    const auto& t = *w.table;
    std::string cols = joined(w.columns, "");
    std::string returning = " RETURNING " + key_text_expr(w.key);
    if (w.change.replaced) {
      w.change.deleted = returned_keys(target_, "DELETE FROM " + t.quoted + " AS " + row_alias + returning);
      w.change.inserted = returned_keys(target_, "INSERT INTO " + t.quoted + " AS " + row_alias + " (" + cols +
                                                     ") OVERRIDING SYSTEM VALUE SELECT " + cols + " FROM " + w.staged +
                                                     returning);
      return;
    }
    w.change.inserted = returned_keys(
        target_, "INSERT INTO " + t.quoted + " AS " + row_alias + " (" + cols + ") OVERRIDING SYSTEM VALUE SELECT " +
                     joined(w.columns, "s.") + " FROM " + w.staged + " AS s WHERE NOT EXISTS (SELECT 1 FROM " + t.quoted +
                     " AS t WHERE " + same_row("t", w.key.quoted_key, "s", w.key.quoted_key) + ")" + returning);
  }

  void update(Work& w) {
    if (w.differing.empty() || w.change.replaced) return;
    std::vector<std::string> rest;
    for (const auto& c : w.columns)
      if (std::find(w.key.quoted_key.begin(), w.key.quoted_key.end(), c) == w.key.quoted_key.end()) rest.push_back(c);
    if (rest.empty()) return;  // every column is the key: a row is there or it is not
    const auto& t = *w.table;
    std::string me = row_alias;
    w.change.updated = returned_keys(
        target_, "UPDATE " + t.quoted + " AS " + me + " SET (" + joined(rest, "") + ") = ROW(" + joined(rest, "s.") + ") FROM " +
                     w.staged + " AS s WHERE " + same_row(me, w.key.quoted_key, "s", w.key.quoted_key) + " AND ROW(" +
                     joined(w.columns, me + ".") + ")::text IS DISTINCT FROM ROW(" + joined(w.columns, "s.") +
                     ")::text RETURNING " + key_text_expr(w.key));
  }

  void remove(Work& w, const std::vector<std::string>& synced) {
    if (w.differing.empty() || w.change.replaced) return;
    const auto& t = *w.table;
    std::string me = row_alias;
    std::string doomed = w.staged + "_delete";
    target_.exec("CREATE TEMPORARY TABLE " + doomed + " ON COMMIT DROP AS SELECT " + joined(w.key.quoted_key, me + ".") +
                 " FROM " + t.quoted + " AS " + me + " WHERE " +
                 chunks_where(w.key, w.chunking, w.differing, bind_bounds(target_, w.chunking)) +
                 " AND NOT EXISTS (SELECT 1 FROM " + w.staged + " AS s WHERE " +
                 same_row("s", w.key.quoted_key, me, w.key.quoted_key) + ")");
    std::set<std::string> synced_oids;
    for (const auto& s : synced) synced_oids.insert(target_.query("SELECT $1::regclass::oid::text", {s})[0][0]);
    for (const auto& fk : incoming_fks(target_, t.quoted)) {
      if (synced_oids.count(fk.child_oid)) continue;  // its rows are synced too, children first
      auto child_key = shardio::primary_key(target_, fk.child);
      std::vector<std::string> shown;
      for (const auto& c : child_key) shown.push_back(target_.identifier(c));
      if (shown.empty()) shown = fk.child_columns;
      auto samples = returned_keys(target_, "SELECT ROW(" + joined(shown, "c.") + ")::text FROM " + fk.child + " AS c JOIN " +
                                                t.quoted + " AS p ON " + same_row("p", fk.parent_columns, "c", fk.child_columns) +
                                                " JOIN " + doomed + " AS d ON " +
                                                same_row("d", w.key.quoted_key, "p", w.key.quoted_key) + " LIMIT 5");
      if (!samples.empty())
        throw Refusal{"rows of " + t.name + " that are not on the source " + w.change.source + " are still referenced by " +
                      fk.child + " through foreign key " + target_.identifier(fk.name) + " (for example " +
                      joined(samples, "") + "); nothing was deleted"};
    }
    w.change.deleted = returned_keys(target_, "DELETE FROM " + t.quoted + " AS " + me + " USING " + doomed + " AS d WHERE " +
                                                   same_row(me, w.key.quoted_key, "d", w.key.quoted_key) + " RETURNING " +
                                                   key_text_expr(w.key));
  }

  RawConn& target_;
  std::string name_;
  const SyncOptions& options_;
};

void rollback(RawConn& conn) {
  try {
    conn.exec("ROLLBACK");
  } catch (...) {
  }
}

ShardSync sync_shard(const ShardRef& target, const std::map<std::string, ShardRef>& sources,
                     const std::vector<RefTable>& tables, const SyncOptions& options) {
  ShardSync out;
  out.shard = target.name;
  std::vector<const RefTable*> mine;
  for (const auto& t : tables)
    if (*t.source != target.name) mine.push_back(&t);
  if (mine.empty()) return out;
  std::string step = "shard " + target.name;
  try {
    RawConn conn(target.dsn, "shard " + target.name);
    conn.script(shardio::session_settings);
    std::map<std::string, std::unique_ptr<RawConn>> from;
    for (const auto* t : mine) {
      auto& c = from[*t->source];
      if (c) continue;
      step = t->source_dsn ? "the source " + *t->source : "source shard " + *t->source;
      c = std::make_unique<RawConn>(sources.at(*t->source).dsn,
                                    t->source_dsn ? "the source " + *t->source : "shard " + *t->source);
      c->script(shardio::session_settings);
      c->exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    }
    step = "shard " + target.name;
    std::vector<Work> works;
    for (const auto* t : mine) {
      Work w;
      w.table = t;
      w.source = from[*t->source].get();
      w.change.table = t->name;
      w.change.source = *t->source;
      works.push_back(std::move(w));
    }
    conn.exec("BEGIN");
    conn.exec("SET LOCAL lock_timeout = '10s'");
    try {
      ShardSyncer syncer(conn, target.name, options);
      out.changes = syncer.run(works);
    } catch (const Refusal& r) {
      rollback(conn);
      out.refused = r.why;
      return out;
    } catch (const shardio::ForeignKeyViolation& e) {
      rollback(conn);
      out.refused = std::string("a foreign key refused the changes: ") + e.what();
      return out;
    } catch (...) {
      rollback(conn);
      throw;
    }
    if (!options.dry_run) fault_point("references.sync.commit", target.name);
    conn.exec(options.dry_run ? "ROLLBACK" : "COMMIT");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::unavailable) throw;
    out.changes.clear();
    out.unreachable = step + ": " + e.what();
  }
  return out;
}

}  // namespace

SyncReport sync_references(const std::vector<ShardRef>& shards, const std::vector<RefTable>& tables,
                           const SyncOptions& options) {
  std::map<std::string, ShardRef> by_name;
  for (const auto& s : shards) by_name[s.name] = s;
  auto known = [&](const std::string& shard, const std::string& what) {
    if (!by_name.count(shard))
      throw usage_error(what + " " + shard + " is not a shard holding copies",
                        "`shardctl shard list` shows the shards (an offline shard holds no copy to sync from)");
  };
  std::vector<RefTable> sourced = tables;
  std::vector<RefTable> by_majority;
  for (auto& t : sourced) {
    if (options.from) t.source = options.from, t.source_dsn.reset();
    if (t.source_dsn) {
      t.source = outside_source_name(*t.source_dsn);
      by_name[*t.source] = {*t.source, *t.source_dsn};
    } else if (t.source) {
      known(*t.source, options.from ? "--from" : "the source of " + t.name + ",");
    } else {
      by_majority.push_back(t);
    }
  }
  if (!by_majority.empty()) {
    auto found = compare_fleet(shards, by_majority, options.parallel);
    for (const auto& r : found.tables) {
      if (!r.tie.empty()) {
        std::string groups;
        for (const auto& g : r.tie) groups += (groups.empty() ? "" : " against ") + joined(g, "");
        throw usage_error("the copies of " + r.table + " have no majority (" + groups + ") and no source is named",
                          "name one: `shardctl table sync-reference " + r.table + " --from SHARD`, or `shardctl table set " +
                              r.table + " --source SHARD`");
      }
      if (r.source.empty()) {
        std::string down;
        for (const auto& u : found.unreachable) down += (down.empty() ? "" : ", ") + u.shard;
        throw unavailable_error("no copy of " + r.table + " could be read to find the majority" +
                                (down.empty() ? "" : " (unreachable: " + down + ")"));
      }
      for (auto& t : sourced)
        if (t.name == r.table) t.source = r.source;
    }
  }
  SyncReport report;
  report.dry_run = options.dry_run;
  report.shards.resize(shards.size());
  // A shard's sync holds its own connection and one per source (each in its snapshot) at once:
  // so many shards at a time that --parallel connections per server are never passed, and at
  // least one (shardctl-table(1)).
  std::set<std::string> distinct_sources;
  for (const auto& t : sourced)
    if (t.source) distinct_sources.insert(*t.source);
  int at_once = std::max(1, options.parallel / static_cast<int>(1 + distinct_sources.size()));
  parallel_for(shards.size(), at_once,
               [&](std::size_t i) { report.shards[i] = sync_shard(shards[i], by_name, sourced, options); });
  return report;
}

}  // namespace shardctl::refdata
