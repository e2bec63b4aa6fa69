#include "archive/restore.hpp"

#include <algorithm>
#include <memory>

#include "archive/archive_set.hpp"
#include "archive/archive_table.hpp"
#include "archive/archiver.hpp"
#include "archive/delivery.hpp"
#include "archive/destination.hpp"
#include "archive/manifest.hpp"
#include "archive/predicate.hpp"
#include "archive/run_journal.hpp"
#include "archive/zstd_file.hpp"
#include "catalog/catalog.hpp"
#include "catalog/locks.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "core/lines.hpp"
#include "fault/fault.hpp"
#include "journal/journal.hpp"
#include "shardio/raw_conn.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/shard_schema.hpp"

namespace shardctl::archive {
namespace {
using catalog::quote_ident;

constexpr const char* restore_flag = "shardctl_restore";

// A table of the archived set as restore needs it on the shards.
struct RTable {
  std::string name;  // display form
  std::string quoted;
  std::string tmp;   // its staging table on each target shard
  int parent = -1;
  std::vector<std::string> child_columns, parent_columns;
  std::vector<shardio::Column> columns;
  std::vector<std::string> primary_key;
  std::size_t key_index = 0;  // the routing column's position in `columns`

  std::string cols(const std::string& q = "") const {
    std::string out;
    for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? ", " : "") + q + quote_ident(columns[i].name);
    return out;
  }
  std::string pk_match(const std::string& a, const std::string& b) const {
    std::string out;
    for (std::size_t i = 0; i < primary_key.size(); ++i)
      out += (i ? " AND " : "") + a + "." + quote_ident(primary_key[i]) + " = " + b + "." + quote_ident(primary_key[i]);
    return out;
  }
};


// One field of a COPY text line, unescaped (COPY's backslash sequences).
std::optional<std::string> copy_field(std::string_view line, std::size_t index) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < index; ++i) {
    start = line.find('\t', start);
    if (start == std::string_view::npos) return std::nullopt;
    ++start;
  }
  auto end = line.find('\t', start);
  auto f = line.substr(start, end == std::string_view::npos ? line.size() - start : end - start);
  if (f == "\\N") return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '\\' || i + 1 == f.size()) {
      out += f[i];
      continue;
    }
    char c = f[++i];
    switch (c) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < f.size() && std::isxdigit(static_cast<unsigned char>(f[i + 1])))
          v = v * 16 + std::stoi(std::string(1, f[++i]), nullptr, 16), ++n;
        out += static_cast<char>(v);
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0', n = 1;
          while (n < 3 && i + 1 < f.size() && f[i + 1] >= '0' && f[i + 1] <= '7') v = v * 8 + (f[++i] - '0'), ++n;
          out += static_cast<char>(v);
        } else {
          out += c;
        }
    }
  }
  return out;
}

struct Target {
  catalog::Shard shard;
  std::unique_ptr<shardio::RawConn> conn;
};

// One archived batch: where its rows come from.
struct Unit {
  std::string shard;        // source shard
  std::int64_t batch = 0;
  std::string archived_at;  // postgres: destination
  std::map<std::string, std::size_t> files;  // dir: table -> index into the manifest's files
};

class RestoreRun {
 public:
  RestoreRun(pg::Connection& catalog, const std::string& run, const std::optional<std::string>& where, bool dry_run)
      : catalog_(catalog), run_(run), where_(where), dry_run_(dry_run) {}

  RestoreReport go() {
    Archiver archiver(catalog_, "");
    auto rep = archiver.report(run_);
    if (rep.op.status == journal::OperationStatus::running) throw journal::run_by_another(rep.op);
    job_ = rep.job;
    catalog::Store store(catalog_);
    tables_for(store);
    report_.run = run_;
    report_.where = where_;
    auto units = dest_units();
    for (auto& u : units) restore_unit(u);
    if (!dry_run_)
      catalog_.transact([&](pqxx::work& tx) {
        journal::insert_done(tx, journal::OperationKind::archive_restore, {{"run", run_}, {"where", where_ ? nlohmann::json(*where_) : nlohmann::json(nullptr)}},
                             to_json(report_));
      });
    return report_;
  }

 private:
  // The run's tables as it recorded them, their map, and their shapes on a shard of it now.
  void tables_for(catalog::Store& store) {
    std::string map = recorded_tables(store);
    loaded_ = store.load_map(map);
    // Column shapes come from a shard of the map: they must still be what was archived.
    std::optional<catalog::Shard> any;
    for (const auto& s : loaded_.shards)
      if (s.status != catalog::ShardStatus::offline) any = s;
    if (!any) throw usage_error("no shard of map " + map + " is reachable for a restore");
    shardio::RawConn probe(any->dsn, "shard " + any->name);
    read_shapes(probe, any->name);
    if (where_) {
      // What the restore's statements hold is the server's rendering of --where, never its text.
      auto root = catalog::split_stored(tables_[0].name);
      condition_ = checked_predicate(probe, root.schema, root.table, tables_[0].name, *where_);
    }
  }

  // The tables the run journaled (root first, parents before children), each a sharded table of
  // the catalog, all of one map, whose name this returns.
  std::string recorded_tables(catalog::Store& store) {
    nlohmann::json recorded;
    catalog_.read([&](pqxx::work& tx) {
      recorded = nlohmann::json::parse(
          tx.exec_params1("SELECT args::text FROM shardctl.operations WHERE op_id = $1", run_)[0].as<std::string>())["tables"];
    });
    std::map<std::string, catalog::TableDef> defs;
    for (const auto& t : store.list_tables()) defs[t.name] = t;
    std::optional<std::string> map;
    for (const auto& t : recorded) {
      auto name = t.at("table").get<std::string>();
      auto it = defs.find(name);
      if (it == defs.end() || it->second.kind != catalog::TableKind::sharded)
        throw usage_error("table " + name + " of archive run " + run_ + " is not a sharded table of the catalog",
                          "restore routes every row by its table's key; register it with `shardctl table add-sharded`");
      if (map && *map != *it->second.map)
        throw usage_error("the tables of archive run " + run_ + " belong to different maps (" + *map + ", " + *it->second.map + ")");
      map = it->second.map;
      RTable r;
      r.name = name;
      r.quoted = catalog::quote_qualified(name);
      r.tmp = "shardctl_restore_" + std::to_string(tables_.size());
      r.child_columns = t.at("columns").get<std::vector<std::string>>();
      r.parent_columns = t.at("parent_columns").get<std::vector<std::string>>();
      if (!t.at("parent").is_null())
        for (std::size_t i = 0; i < tables_.size(); ++i)
          if (tables_[i].name == t.at("parent").get<std::string>()) r.parent = static_cast<int>(i);
      key_columns_.push_back(*it->second.key_column);
      tables_.push_back(std::move(r));
    }
    return *map;
  }

  // Each table's columns, primary key and routing column as shard `shard` (on `probe`) has them.
  void read_shapes(shardio::RawConn& probe, const std::string& shard) {
    for (std::size_t i = 0; i < tables_.size(); ++i) {
      auto& t = tables_[i];
      t.columns = shardio::table_columns(probe, t.quoted);
      t.primary_key = shardio::primary_key(probe, t.quoted);
      bool found = false;
      for (std::size_t k = 0; k < t.columns.size(); ++k)
        if (t.columns[k].name == key_columns_[i]) t.key_index = k, found = true;
      if (!found) throw usage_error("table " + t.name + " on shard " + shard + " lacks its key column " + key_columns_[i]);
    }
  }

  // The archived batches to restore, in order, from the job's destination.
  std::vector<Unit> dest_units() {
    if (job_.to.kind == Destination::Kind::postgres) return postgres_units();
    return dir_units();
  }

  // postgres: the batches the run deleted at the source, from archive tables still shaped as
  // the shards' tables are.
  std::vector<Unit> postgres_units() {
    dest_ = std::make_unique<shardio::RawConn>(job_.to.dsn, "archive database");
    dest_->script(shardio::session_settings);
    dest_->exec(predicate_settings);
    for (const auto& t : tables_) {
      auto cols = shardio::table_columns(*dest_, t.quoted);
      if (cols.empty()) throw data_error("the archive database lacks table " + t.name + " of run " + run_);
      require_matching_columns(t.columns, cols, t.name + " in " + job_.to.describe());
    }
    std::vector<Unit> units;
    catalog_.read([&](pqxx::work& tx) {
      for (const auto& r : tx.exec_params(
               "SELECT s.name, b.batch_no, to_char(b.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') "
               "FROM shardctl.archive_batches b JOIN shardctl.shards s USING (shard_id) "
               "WHERE b.op_id = $1 AND b.step = $2 ORDER BY s.name, b.batch_no",
               run_, std::string(to_text(BatchStep::deleted))))
        units.push_back({r[0].as<std::string>(), r[1].as<std::int64_t>(), r[2].as<std::string>(), {}});
    });
    return units;
  }

  // dir: the manifest's files not restored yet, by (shard, batch), once every table is still
  // shaped as the run recorded it and every file holds what the manifest says.
  std::vector<Unit> dir_units() {
    run_dir_ = run_directory(job_.to, run_);
    manifest_ = read_manifest(run_dir_);
    for (const auto& t : tables_) {
      auto root = catalog::split_stored(t.name);
      auto it = manifest_.ddl.find(t.name);
      if (it != manifest_.ddl.end() && it->second != source_table_ddl(root.schema, root.table, t.columns))
        throw data_error("table " + t.name + " is no longer shaped as archive run " + run_ + " recorded it (" + it->second + ")",
                         "restore into a table with the archived columns");
    }
    std::map<std::pair<std::string, std::int64_t>, Unit> by_batch;
    for (std::size_t i = 0; i < manifest_.files.size(); ++i) {
      const auto& f = manifest_.files[i];
      if (f.restored) continue;
      auto& u = by_batch[{f.shard, f.batch}];
      u.shard = f.shard;
      u.batch = f.batch;
      u.files[f.table] = i;
    }
    std::vector<Unit> units;
    for (auto& [k, u] : by_batch) units.push_back(std::move(u));
    check_files(units);
    return units;
  }

  // Every file is checked against the manifest before any row moves: a damaged file or an
  // edited manifest stops the restore (65) with nothing restored.
  void check_files(const std::vector<Unit>& units) {
    for (const auto& u : units)
      for (const auto& [table, idx] : u.files) {
        const auto& f = manifest_.files[idx];
        std::int64_t rows = 0;
        read_zstd_file(run_dir_ / f.path, f.sha256,
                       [&](std::string_view chunk) { rows += static_cast<std::int64_t>(std::count(chunk.begin(), chunk.end(), '\n')); });
        if (rows != f.rows)
          throw data_error("archive file " + (run_dir_ / f.path).string() + " holds " + std::to_string(rows) +
                               " rows; its manifest says " + std::to_string(f.rows),
                           "the manifest or the file was changed since the run wrote them; nothing was restored");
      }
  }

  Target& target(std::size_t index) {
    auto it = targets_.find(index);
    if (it != targets_.end()) return it->second;
    Target t;
    t.shard = loaded_.shards.at(index);
    t.conn = std::make_unique<shardio::RawConn>(t.shard.dsn, "shard " + t.shard.name);
    t.conn->script(shardio::session_settings);
    t.conn->exec(predicate_settings);
    t.conn->exec("BEGIN");
    for (const auto& r : tables_) {
      t.conn->exec("CREATE TEMP TABLE " + r.tmp + " ON COMMIT DROP AS SELECT " + r.cols() + " FROM " + r.quoted + " WITH NO DATA");
      t.conn->exec("ALTER TABLE " + r.tmp + " ADD COLUMN " + restore_flag + " boolean NOT NULL DEFAULT true");
    }
    return targets_.emplace(index, std::move(t)).first->second;
  }

  // Streams table `i`'s rows of the unit to the staging tables of the shards their keys route to.
  void stage(const Unit& u, std::size_t i) {
    const auto& t = tables_[i];
    std::map<std::size_t, std::unique_ptr<shardio::CopyIn>> copies;  // one per target shard
    std::string partial;
    auto route_line = [&](std::string_view line) {
      auto key = copy_field(line, t.key_index);
      if (!key) throw data_error("a row of " + t.name + " in archive run " + run_ + " has no key (" + key_columns_[i] + " is NULL)");
      auto route = loaded_.router->route_text(*key);
      if (!route) throw usage_error("no mapping of map " + loaded_.map.name + " holds key '" + *key + "' of " + t.name,
                                    "add a mapping for it, then restore again");
      if (!route->online)
        throw locked_error("key '" + *key + "' of " + t.name + " is in an offline mapping (an operation moves it)",
                           "restore again when the operation has finished");
      auto idx = static_cast<std::size_t>(route->shard_index);
      auto& c = copies[idx];
      if (!c) c = std::make_unique<shardio::CopyIn>(*target(idx).conn, "COPY " + t.tmp + " (" + t.cols() + ") FROM STDIN");
      c->put(line);
    };
    auto sink = [&](std::string_view chunk) { for_each_line(chunk, partial, route_line); };
    if (dest_) {
      shardio::copy_out_to(*dest_,
                           "COPY (SELECT " + t.cols() + " FROM " + t.quoted + " WHERE " + quote_ident(source_shard_column) +
                               " = " + dest_->literal(u.shard) + " AND " + quote_ident(archived_at_column) + " = " +
                               dest_->literal(u.archived_at) + "::timestamptz) TO STDOUT",
                           sink);
    } else if (auto f = u.files.find(t.name); f != u.files.end()) {
      const auto& mf = manifest_.files[f->second];
      read_zstd_file(run_dir_ / mf.path, mf.sha256, sink);
    }
    if (!partial.empty()) throw data_error("the archived rows of " + t.name + " end in the middle of a row");
    for (auto& [idx, c] : copies) c->end();
  }

  void restore_unit(const Unit& u) {
    targets_.clear();
    for (std::size_t i = 0; i < tables_.size(); ++i) stage(u, i);
    std::map<std::string, std::string> remaining;  // dir: table -> rows that stay archived
    try {
      for (auto& [idx, tg] : targets_) check_and_insert(tg, remaining);
    } catch (const shardio::ForeignKeyViolation& e) {
      targets_.clear();  // closing the sessions rolls every shard back
      // Rows of one table that reference each other, archived by several runs (a tree by
      // parent_id): the row a restored row references may still be in the archive.
      throw usage_error(std::string(e.what()),
                        "nothing was restored from this batch: a row it references is not on the shard; restore "
                        "first the run that archived that row (`shardctl archive list`), then this one again");
    } catch (...) {
      targets_.clear();  // closing the sessions rolls every shard back
      throw;
    }
    ++report_.batches;
    if (dry_run_) {
      targets_.clear();
      return;
    }
    // Fault points (fault/fault.hpp) name the batch as the run's do, "SHARD/bN" of its source
    // shard, so a re-run that is killed again names the same boundary; a commit also names the
    // target shard it commits on.
    std::string unit = u.shard + "/b" + std::to_string(u.batch);
    for (auto& [idx, tg] : targets_) {
      fault_.point("restore-commit", unit + "/" + tg.shard.name);
      tg.conn->exec("COMMIT");
    }
    fault_.point("restore-committed", unit);
    targets_.clear();
    remove_from_archive(u, remaining);
    fault_.point("restore-removed", unit);
  }

  void check_and_insert(Target& tg, std::map<std::string, std::string>& remaining) {
    auto& c = *tg.conn;
    if (where_) {
      c.exec("UPDATE " + tables_[0].tmp + " AS t0 SET " + restore_flag + " = coalesce((" + condition_ + "), false)");
      for (std::size_t i = 1; i < tables_.size(); ++i) {
        const auto& t = tables_[i];
        const auto& p = tables_[static_cast<std::size_t>(t.parent)];
        c.exec("UPDATE " + t.tmp + " AS c SET " + restore_flag + " = EXISTS (SELECT 1 FROM " + p.tmp + " p WHERE p." +
               restore_flag + " AND " + fk_join(t.child_columns, t.parent_columns, "c", "p") + ")");
      }
    }
    for (const auto& t : tables_) {
      std::int64_t staged = std::stoll(c.query("SELECT count(*) FROM " + t.tmp + " WHERE " + restore_flag)[0][0]);
      std::int64_t inserted = 0;
      if (!t.primary_key.empty()) {
        auto clash = c.query("SELECT count(*), min(ROW(" + t.cols("x.") + ")::text) FROM " + t.tmp + " x JOIN " + t.quoted +
                             " y ON " + t.pk_match("x", "y") + " WHERE x." + restore_flag + " AND ROW(" + t.cols("x.") +
                             ")::text IS DISTINCT FROM ROW(" + t.cols("y.") + ")::text");
        if (clash[0][0] != "0")
          throw usage_error("restore conflict: shard " + tg.shard.name + " already holds " + clash[0][0] + " row(s) of " + t.name +
                                " with the same key and other contents, e.g. " + clash[0][1],
                            "nothing was restored from this batch; resolve the rows on the shard, or restore with --where");
        inserted = std::stoll(c.query("WITH ins AS (INSERT INTO " + t.quoted + " (" + t.cols() + ") OVERRIDING SYSTEM VALUE SELECT " +
                                      t.cols("x.") + " FROM " + t.tmp + " x WHERE x." + restore_flag +
                                      " AND NOT EXISTS (SELECT 1 FROM " + t.quoted + " y WHERE " + t.pk_match("x", "y") +
                                      ") RETURNING 1) SELECT count(*) FROM ins")[0][0]);
        auto there = std::stoll(c.query("SELECT count(*) FROM " + t.tmp + " x JOIN " + t.quoted + " y ON " + t.pk_match("x", "y") +
                                        " WHERE x." + restore_flag + " AND ROW(" + t.cols("x.") + ")::text = ROW(" +
                                        t.cols("y.") + ")::text")[0][0]);
        if (there != staged)
          throw internal_error("restore of " + t.name + " on " + tg.shard.name + ": " + std::to_string(there) + " of " +
                               std::to_string(staged) + " rows are on the shard after the insert");
      } else {
        // No key to find a row by: a row the shard holds with identical contents counts as
        // restored already, so running an interrupted restore again adds nothing twice.
        inserted = std::stoll(c.query("WITH ins AS (INSERT INTO " + t.quoted + " (" + t.cols() + ") OVERRIDING SYSTEM VALUE SELECT " +
                                      t.cols("x.") + " FROM " + t.tmp + " x WHERE x." + restore_flag +
                                      " AND NOT EXISTS (SELECT 1 FROM " + t.quoted + " y WHERE ROW(" + t.cols("y.") +
                                      ")::text = ROW(" + t.cols("x.") + ")::text) RETURNING 1) SELECT count(*) FROM ins")[0][0]);
      }
      report_.restored[tg.shard.name][t.name] += inserted;
      report_.present[tg.shard.name][t.name] += staged - inserted;
      if (!dest_ && where_)
        shardio::copy_out_to(c, "COPY (SELECT " + t.cols() + " FROM " + t.tmp + " WHERE NOT " + restore_flag + ") TO STDOUT",
                             [&](std::string_view chunk) { remaining[t.name].append(chunk); });
    }
  }

  void remove_from_archive(const Unit& u, const std::map<std::string, std::string>& remaining) {
    if (dest_) {
      auto& d = *dest_;
      std::string batch = quote_ident(source_shard_column) + " = " + d.literal(u.shard) + " AND " +
                          quote_ident(archived_at_column) + " = " + d.literal(u.archived_at) + "::timestamptz";
      d.exec("BEGIN");
      if (!where_) {
        for (const auto& t : tables_) d.exec("DELETE FROM " + t.quoted + " WHERE " + batch);
      } else {
        d.exec("DELETE FROM " + tables_[0].quoted + " AS t0 WHERE " + batch + " AND coalesce((" + condition_ + "), false)");
        for (std::size_t i = 1; i < tables_.size(); ++i) {
          const auto& t = tables_[i];
          const auto& p = tables_[static_cast<std::size_t>(t.parent)];
          d.exec("DELETE FROM " + t.quoted + " AS c WHERE c." + batch + " AND NOT EXISTS (SELECT 1 FROM " + p.quoted +
                 " p WHERE p." + quote_ident(source_shard_column) + " = c." + quote_ident(source_shard_column) + " AND p." +
                 quote_ident(archived_at_column) + " = c." + quote_ident(archived_at_column) + " AND " + fk_join(t.child_columns, t.parent_columns, "c", "p") + ")");
        }
      }
      d.exec("COMMIT");
      return;
    }
    for (const auto& [table, idx] : u.files) {
      auto& f = manifest_.files[idx];
      auto it = remaining.find(table);
      if (!where_ || it == remaining.end() || it->second.empty()) {
        f.restored = true;
        continue;
      }
      // Some rows stay archived: the file is rewritten with them alone.
      ZstdFileWriter w(run_dir_ / f.path);
      w.write(it->second);
      auto written = w.finish();
      f.rows = static_cast<std::int64_t>(std::count(it->second.begin(), it->second.end(), '\n'));
      f.raw_bytes = written.raw_bytes;
      f.bytes = written.compressed_bytes;
      f.sha256 = written.sha256;
    }
    write_manifest(run_dir_, manifest_);
  }

  pg::Connection& catalog_;
  std::string run_;
  std::optional<std::string> where_;  // as the operator wrote it (the report and journal say this)
  std::string condition_;             // its rendering by a shard's server (checked_predicate)
  bool dry_run_;
  Job job_;
  std::vector<RTable> tables_;
  std::vector<std::string> key_columns_;
  catalog::LoadedMap loaded_;
  std::map<std::size_t, Target> targets_;
  std::unique_ptr<shardio::RawConn> dest_;
  std::filesystem::path run_dir_;
  Manifest manifest_;
  RestoreReport report_;
  fault::FaultInjector fault_;
};

}  // namespace

nlohmann::json to_json(const RestoreReport& r) {
  return {{"run", r.run},
          {"where", r.where ? nlohmann::json(*r.where) : nlohmann::json(nullptr)},
          {"batches", r.batches},
          {"restored", r.restored},
          {"already_present", r.present}};
}

void print_restore(std::ostream& out, const RestoreReport& r, bool dry_run) {
  std::int64_t total = 0, present = 0;
  for (const auto& [shard, tables] : r.restored)
    for (const auto& [table, n] : tables) {
      total += n;
      out << (dry_run ? "would restore " : "restored ") << n << " row(s) of " << table << " to " << shard << '\n';
    }
  for (const auto& [shard, tables] : r.present)
    for (const auto& [table, n] : tables) present += n;
  out << (dry_run ? "would restore " : "restored ") << total << " row(s) from " << r.batches << " archived batch(es) of run "
      << r.run;
  if (present) out << "; " << present << " were already on their shard";
  out << '\n';
}

RestoreReport Restorer::restore(const std::string& run, const std::optional<std::string>& where, bool dry_run) {
  bool got = false;
  catalog_.read([&](pqxx::work& tx) {
    got = tx.exec_params1("SELECT pg_try_advisory_lock($1, hashtext('archive-restore:' || $2))", catalog::lock_class, run)[0]
              .as<bool>();
  });
  if (!got) throw locked_error("archive run " + run + " is being restored by another process", "try again when it has finished");
  return RestoreRun(catalog_, run, where, dry_run).go();
}

}  // namespace shardctl::archive
