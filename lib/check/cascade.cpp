#include "check/cascade.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "shardio/fk_tree.hpp"
#include "shardio/shard_schema.hpp"
#include "shardside/quarantine.hpp"

namespace shardctl::check {
namespace {

using catalog::quote_ident;

// The root and the tables whose rows reference its rows, to any depth.
using Node = shardio::FkNode;

std::string quarantine_table(const Node& n) {
  return std::string(quarantine_schema) + "." + quote_ident(n.schema + "." + n.table);
}

std::int64_t single_count(shardio::RawConn& conn, const std::string& sql, const std::vector<std::string>& params) {
  return std::stoll(conn.query(sql, params)[0][0]);
}

// Children before parents: a parent row cannot go while rows still reference it.
void process(shardio::RawConn& conn, const Node& n, Removal how, bool dry_run, const std::vector<std::string>& params,
             std::vector<TableRows>& out) {
  for (const auto& c : n.children) process(conn, c, how, dry_run, params, out);
  std::string from = n.quoted + " " + n.alias + " WHERE " + n.predicate;
  std::int64_t rows = 0;
  if (dry_run) {
    rows = single_count(conn, "SELECT count(*) FROM " + from, params);
  } else if (how == Removal::remove) {
    rows = single_count(conn, "WITH d AS (DELETE FROM " + from + " RETURNING 1) SELECT count(*) FROM d", params);
  } else {
    std::string q = quarantine_table(n);
    conn.exec("CREATE TABLE IF NOT EXISTS " + q + " (LIKE " + n.quoted + ")");
    shardside::record_quarantined(conn, {n.schema + "." + n.table, n.schema, n.table});
    rows = single_count(conn,
                        "WITH moved AS (DELETE FROM " + from + " RETURNING " + n.alias + ".*), ins AS (INSERT INTO " + q +
                            " SELECT * FROM moved RETURNING 1) SELECT count(*) FROM ins",
                        params);
  }
  out.insert(out.begin(), TableRows{n.schema + "." + n.table, rows});
}

// Moves a quarantine table's rows back into `original` by column name. The quarantine copy
// holds every column as a plain one (CREATE TABLE ... LIKE copies neither identity nor
// generation), so: stored generated columns are left out and the server recomputes them;
// GENERATED ALWAYS identity columns get their old values back through OVERRIDING SYSTEM VALUE.
std::string restore_sql(shardio::RawConn& conn, const std::string& original, const std::string& q) {
  std::vector<std::string> cols;
  bool identity_always = false;
  for (auto& r : conn.query("SELECT attname, attgenerated::text, attidentity::text FROM pg_attribute "
                            "WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                            {original})) {
    if (!r[1].empty()) continue;  // generated: recomputed from the restored columns
    if (r[2] == "a") identity_always = true;
    cols.push_back(quote_ident(r[0]));
  }
  std::string list = join(cols, ", ");
  return "WITH r AS (DELETE FROM " + q + " RETURNING *), ins AS (INSERT INTO " + original + " (" + list + ")" +
         (identity_always ? " OVERRIDING SYSTEM VALUE" : "") + " SELECT " + list +
         " FROM r RETURNING 1) SELECT count(*) FROM ins";
}

// Runs `body` in one transaction on `conn`, rolled back when it throws.
template <class F>
void in_transaction(shardio::RawConn& conn, F&& body) {
  conn.exec("BEGIN");
  try {
    body();
    conn.exec("COMMIT");
  } catch (...) {
    try {
      conn.exec("ROLLBACK");
    } catch (...) {  // the connection is gone; the server rolled back
    }
    throw;
  }
}

// The table `quoted` names, as the root of a tree of referencing tables (alias t0).
Node root_node(shardio::RawConn& conn, const std::string& quoted) {
  Node root;
  auto names = conn.query("SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                          "WHERE c.oid = $1::regclass",
                          {quoted});
  root.schema = names.at(0)[0];
  root.table = names.at(0)[1];
  root.quoted = quote_ident(root.schema) + "." + quote_ident(root.table);
  root.alias = "t0";
  return root;
}

// How a batch names its root rows. A batch's root rows are fixed up front in a temporary table,
// so the statements of the batch (children first, then the root) all see the same rows, whatever
// else changes. Without a primary key a row is its ctid: the batch locks its rows (FOR UPDATE)
// when it picks them, so no concurrent UPDATE can move one to another ctid before the DELETE.
// The batch table names the column row_ctid: a user column cannot be called "ctid".
struct RowIdentity {
  std::string columns;  // t0's identifying columns: "t0.a, t0.b" or "t0.ctid"
  std::string picked;   // the same as the batch table's columns
};

RowIdentity row_identity(shardio::RawConn& conn, const Node& root) {
  std::vector<std::string> ident, picked_cols;
  for (const auto& c : shardio::primary_key(conn, root.quoted)) {
    ident.push_back("t0." + quote_ident(c));
    picked_cols.push_back("t0." + quote_ident(c));
  }
  if (ident.empty()) {
    ident.push_back("t0.ctid");
    picked_cols.push_back("t0.ctid AS row_ctid");
  }
  return {join(ident, ", "), join(picked_cols, ", ")};
}

// A foreign key the tree does not follow (a table referencing itself, a cycle) may name a bad
// row from a row that is not taken: the database would cascade the DELETE to it, out of the
// quarantine's reach, or refuse it. Refused before any row moves, dry run included.
void refuse_unfollowed_keys(shardio::RawConn& conn, const Node& root) {
  for (const auto& fk : shardio::unfollowed_foreign_keys(conn, root))
    throw usage_error("cannot take rows of " + catalog::display_name({root.schema, root.table}) +
                          " out with the rows that reference them: " + shardio::describe_unfollowed(fk),
                      "fix these rows by hand (`shardctl check` lists them), or run without --fix");
}

// What every batch of one take_out shares.
struct Batching {
  const Node& root;
  const RowSet& rows;
  Removal how;
  std::string picked;  // RowIdentity::picked
  int batch_rows;
  const std::function<void()>& before_batch;
};

// One batch, inside its transaction: picks at most batch_rows root rows (locked), takes them and
// their descendants out, adds the counts to `out`. Returns the rows picked (0: none left).
std::int64_t take_batch(shardio::RawConn& conn, const Batching& b, std::vector<TableRows>& out) {
  if (b.how == Removal::quarantine) shardside::ensure_quarantine(conn);
  if (b.before_batch) b.before_batch();
  conn.exec("CREATE TEMP TABLE shardctl_fix_batch ON COMMIT DROP AS SELECT " + b.picked + " FROM " + b.root.quoted +
            " t0 WITH NO DATA");
  std::int64_t picked = single_count(conn,
                                     "WITH b AS (INSERT INTO pg_temp.shardctl_fix_batch SELECT " + b.picked + " FROM " +
                                         b.root.quoted + " t0 WHERE " + b.rows.predicate +
                                         (b.batch_rows > 0 ? " LIMIT " + std::to_string(b.batch_rows) : std::string()) +
                                         " FOR UPDATE OF t0 RETURNING 1) SELECT count(*) FROM b",
                                     b.rows.params);
  if (picked == 0) return 0;
  // This batch's counts alone (process() puts each table first in its output).
  std::vector<TableRows> batch;
  process(conn, b.root, b.how, false, {}, batch);
  // A trigger that silently skips the DELETE would make the batches loop forever.
  for (const auto& t : batch)
    if (t.table == b.root.schema + "." + b.root.table && t.rows != picked)
      throw internal_error("only " + std::to_string(t.rows) + " of " + std::to_string(picked) + " rows of " + t.table +
                           " could be taken out (a trigger refusing the DELETE?)");
  out.insert(out.end(), batch.begin(), batch.end());
  return picked;
}

// Root first, then descendants, each table once (batches and a table reached twice sum).
std::vector<TableRows> merged_by_table(const Node& root, const std::vector<TableRows>& out) {
  std::vector<TableRows> merged{{root.schema + "." + root.table, 0}};
  for (const auto& t : out) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](const TableRows& m) { return m.table == t.table; });
    if (it == merged.end()) merged.push_back(t);
    else it->rows += t.rows;
  }
  return merged;
}

}  // namespace

std::vector<TableRows> take_out(shardio::RawConn& conn, const RowSet& rows, Removal how, bool dry_run,
                                int batch_rows, const std::function<void()>& before_batch) {
  Node root = root_node(conn, rows.quoted_table);
  RowIdentity id = row_identity(conn, root);
  root.predicate = dry_run ? rows.predicate : "(" + id.columns + ") IN (SELECT * FROM pg_temp.shardctl_fix_batch)";
  shardio::add_referencing_tables(conn, root);
  refuse_unfollowed_keys(conn, root);

  std::vector<TableRows> out;
  if (dry_run) {
    in_transaction(conn, [&] { process(conn, root, how, true, rows.params, out); });
    return merged_by_table(root, out);
  }
  Batching batching{root, rows, how, id.picked, batch_rows, before_batch};
  for (;;) {
    std::int64_t picked = 0;
    in_transaction(conn, [&] { picked = take_batch(conn, batching, out); });
    if (picked == 0 || batch_rows <= 0) break;
  }
  return merged_by_table(root, out);
}

std::vector<TableRows> restore_quarantine(shardio::RawConn& conn, bool dry_run) {
  std::vector<TableRows> out;
  auto manifest = shardside::quarantine_manifest(conn);
  if (manifest.empty()) return out;
  std::map<std::string, std::string> quarantined_of;  // quoted original -> quoted quarantine table
  std::vector<std::string> originals;
  for (const auto& m : manifest) {
    std::string original = quote_ident(m.source_schema) + "." + quote_ident(m.source_table);
    quarantined_of[original] = std::string(quarantine_schema) + "." + quote_ident(m.quarantine_table);
    originals.push_back(original);
  }
  in_transaction(conn, [&] {
    // Quarantined orphans have no parent by definition: putting them back as they were means
    // not re-checking foreign keys (superuser or GRANT SET ON PARAMETER). Without that right,
    // the restore goes on and the foreign key refuses such rows with the server's message.
    if (!dry_run) {
      conn.exec("SAVEPOINT shardctl_role");
      try {
        conn.exec("SET LOCAL session_replication_role = replica");
      } catch (const Error&) {
        conn.exec("ROLLBACK TO SAVEPOINT shardctl_role");
      }
    }
    for (const auto& original : shardio::fk_order(conn, originals)) {  // parents first
      const auto& q = quarantined_of[original];
      std::int64_t rows = dry_run ? single_count(conn, "SELECT count(*) FROM " + q, {})
                                  : single_count(conn, restore_sql(conn, original, q), {});
      auto unquoted = conn.query("SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON "
                                 "n.oid = c.relnamespace WHERE c.oid = $1::regclass",
                                 {original});
      out.push_back({unquoted.at(0)[0], rows});
    }
    if (!dry_run) shardside::drop_quarantine(conn);
  });
  return out;
}

}  // namespace shardctl::check
