#include "archive/shard_worker.hpp"

#include <functional>
#include <thread>

#include "catalog/key_sql.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "digest/row_digest.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/key_filter.hpp"
#include "pg/connection.hpp"
#include "journal/journal.hpp"
#include "shardside/receipts.hpp"

namespace shardctl::archive {
namespace {

constexpr int conflict_retries = 5;

nlohmann::json stats_json(const ArchiveSet& set, const std::vector<TableStats>& stats) {
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t i = 0; i < set.tables.size(); ++i)
    out[set.tables[i].name] = {{"rows", stats[i].rows}, {"checksum", stats[i].checksum}};
  return out;
}

class ShardWorker {
 public:
  ShardWorker(RunShared& run, const catalog::Shard& shard, std::int64_t shard_id)
      : run_(run), shard_(shard), shard_id_(shard_id), catalog_(run.catalog_dsn, "catalog"),
        src_(shard.dsn, "shard " + shard.name) {
    src_.script(shardio::session_settings);
  }

  void run() {
    prepare();
    while (auto batch = next_batch()) {
      wait_for_replicas();
      archive_with_retries(*batch);
      if (run_.job.sleep) std::this_thread::sleep_for(*run_.job.sleep);
    }
  }

 private:
  // The shard's tables must be those the run started with, and the destination ready for them.
  void prepare() {
    set_ = discover_archive_set(src_, run_.job, run_.xrefs);
    find_map();
    if (set_.describe() != run_.tables)
      throw usage_error("the tables of archive run " + run_.run + " on shard " + shard_.name +
                            " are not those it started with (a foreign key or column changed)",
                        "cancel the run (`shardctl op cancel " + run_.run + "`) and start a new one");
    shardside::ensure_archive_receipts(src_);
    delivery_ = make_delivery(run_.job.to, run_.manifest);
    delivery_->prepare(set_, true);
  }

  // The batch to archive next: the one in flight, else a new one. None when the run stops or
  // the shard is done.
  std::optional<BatchState> next_batch() {
    while (!run_.stopping()) {
      std::optional<BatchState> batch;
      ShardRunState state;
      bool cancel = false;
      catalog_.read([&](pqxx::work& tx) {
        batch = pending_batch(tx, run_.run, shard_id_);
        for (auto& s : run_shards(tx, run_.run))
          if (s.shard_id == shard_id_) state = s;
        cancel = journal::cancel_requested(tx, run_.run);
      });
      if (batch && receipt(*batch)) continue;  // its rows already left the shard; journaled now
      if (batch) return batch;
      return new_batch(state, cancel);
    }
    return std::nullopt;
  }

  // The next batch after the shard's cursor, journaled before anything is delivered. A batch in
  // flight is always finished; a new one starts only when nothing says stop (a cancel, the
  // deadline of --max-runtime). None, and the shard journaled done, when nothing is left.
  std::optional<BatchState> new_batch(const ShardRunState& state, bool cancel) {
    if (cancel) {
      run_.request_stop(StopReason::cancelled);
      return std::nullopt;
    }
    if (run_.deadline && std::chrono::steady_clock::now() >= *run_.deadline) {
      run_.request_stop(StopReason::max_runtime);
      return std::nullopt;
    }
    auto end = batch_end(state);
    if (!end) {
      journal([&](pqxx::work& tx) { mark_shard_done(tx, run_.run, shard_id_); });
      return std::nullopt;
    }
    std::optional<BatchState> batch;
    journal([&](pqxx::work& tx) { batch = insert_batch(tx, run_.run, shard_id_, state.cursor, *end); });
    run_.point("archive-selected", shard_.name, batch->batch_no);
    return batch;
  }

  void archive_with_retries(const BatchState& batch) {
    for (int attempt = 1;; ++attempt) {
      try {
        archive_batch(batch);
        return;
      } catch (const shardio::ConflictError&) {
        // A writer changed a row of the batch first: nothing was deleted; take it again.
        if (attempt >= conflict_retries) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
      }
    }
  }

  // When the root table is a sharded table of the catalog: its map, whose live operations'
  // key ranges every batch leaves alone.
  void find_map() {
    catalog_.read([&](pqxx::work& tx) {
      auto r = tx.exec_params("SELECT t.map_id, t.key_column, m.kind, m.key_type FROM shardctl.tables t "
                              "JOIN shardctl.maps m USING (map_id) WHERE t.name = $1 AND t.kind = $2",
                              run_.job.table, std::string(catalog::to_text(catalog::TableKind::sharded)));
      if (r.empty()) return;
      map_id_ = r[0][0].as<std::int64_t>();
      key_column_ = "t0." + catalog::quote_ident(r[0][1].as<std::string>());
      space_ = shardio::RouteSpace{parse_word<routing::MapKind>(r[0][2].as<std::string>()),
                                   routing::parse_key_type(r[0][3].as<std::string>())};
    });
  }

  // " AND NOT (...)": the root rows whose key a live operation of the map claims. A split, merge
  // or move has copies of them on two shards until it purges its source (its guard refuses the
  // source's DELETE; the target's copies are not the target's yet): they wait for a later run.
  std::string outside_live_operations() {
    if (!map_id_) return "";
    std::string any;
    catalog_.read([&](pqxx::work& tx) {
      auto bt = catalog::bound_type(space_.kind, space_.key_type);
      for (const auto& r : tx.exec_params(
               "SELECT coalesce(lower(int_range)::text, lower(text_range)::text, lower(uuid_range)::text), "
               "coalesce(upper(int_range)::text, upper(text_range)::text, upper(uuid_range)::text), "
               "coalesce(upper_inc(int_range), upper_inc(text_range), upper_inc(uuid_range), false) "
               "FROM shardctl.operations WHERE map_id = $1 AND status NOT IN ($2, $3)",
               *map_id_, std::string(journal::to_text(journal::OperationStatus::done)),
               std::string(journal::to_text(journal::OperationStatus::cancelled)))) {
        routing::KeyRange range;
        if (!r[0].is_null()) range.low = routing::parse_key(bt, r[0].as<std::string>());
        if (!r[1].is_null()) range.high = routing::parse_key(bt, r[1].as<std::string>());
        any += (any.empty() ? "(" : " OR (") + shardio::claim_filter(src_, space_, key_column_, range, r[2].as<bool>()) + ")";
      }
    });
    return any.empty() ? "" : " AND NOT (" + any + ")";
  }

  // The last key of the next batch, or none when the shard has nothing left up to its bound.
  std::optional<KeyValues> batch_end(const ShardRunState& state) {
    if (!state.upper) return std::nullopt;
    std::vector<std::string> params;
    if (state.cursor) params.insert(params.end(), state.cursor->begin(), state.cursor->end());
    params.insert(params.end(), state.upper->begin(), state.upper->end());
    params.push_back(std::to_string(run_.job.batch_size));
    auto r = src_.query(set_.keyset.batch_end_sql(state.cursor.has_value()), params);
    if (r.empty()) return std::nullopt;
    return r[0];
  }

  std::string literal_row(const KeyValues& values) {
    std::vector<std::string> quoted;
    for (const auto& v : values) quoted.push_back(src_.literal(v));
    return set_.keyset.literal_row(quoted);
  }

  // Whether the source committed the batch's DELETE; if so, journals it as deleted.
  bool receipt(const BatchState& batch) {
    auto r = shardside::archive_receipt(src_, run_.run, batch.batch_no);
    if (!r) return false;
    auto tables = nlohmann::json::parse(r->tables);
    journal([&](pqxx::work& tx) { mark_deleted(tx, run_.run, shard_id_, batch, tables, r->refused); });
    report(tables);
    return true;
  }

  // A batch's rows as SQL: its bounds (Keyset::literal_row), the root filter over them, and what
  // names the batch at the destination.
  struct BatchRows {
    std::optional<std::string> low;  // none for the shard's first batch
    std::string high;
    std::string root;
    BatchRef ref;
    const std::string* low_or_null() const { return low ? &*low : nullptr; }
  };

  BatchRows batch_rows(const BatchState& batch) {
    BatchRows rows;
    if (batch.low) rows.low = literal_row(*batch.low);
    rows.high = literal_row(batch.high);
    rows.root = set_.root_filter(rows.low_or_null(), rows.high) + outside_live_operations();
    rows.ref = BatchRef{run_.run, shard_.name, batch.batch_no, batch.archived_at};
    return rows;
  }

  void archive_batch(const BatchState& batch) {
    BatchRows rows = batch_rows(batch);
    // One snapshot for selecting, copying and deleting. The rows of the root and of every table
    // an archived table references are locked first, parents first, so no writer changes them and
    // no new row can reference them until the source commits; a row a writer changed before the
    // lock (or a leaf row it changes before the DELETE) makes the transaction fail and the batch
    // is taken again. The source's DELETEs run before the destination commits but commit only
    // after it: a crash in between leaves the rows on the shard, and the batch is delivered again.
    src_.exec("BEGIN ISOLATION LEVEL REPEATABLE READ");
    try {
      lock_and_stage(rows);
      std::int64_t refused = count_refused(rows);
      run_.point("archive-locked", shard_.name, batch.batch_no);
      delivery_->begin(rows.ref, set_);
      std::string extra = delivery_->extra_columns(rows.ref, src_);
      auto sent = load_staged_parents_first(rows, extra);
      run_.point("archive-loaded", shard_.name, batch.batch_no);
      auto deleted = delete_children_first(rows, extra, sent);
      run_.point("archive-deleted", shard_.name, batch.batch_no);
      auto tables = deliver(rows.ref, deleted);
      commit_source(batch, tables, refused);
    } catch (...) {
      delivery_->abort();
      try {
        src_.exec("ROLLBACK");
      } catch (...) {
      }
      throw;
    }
  }

  // Locks the rows of the batch in every staged table, parents first, and stages their ctids.
  void lock_and_stage(const BatchRows& rows) {
    for (std::size_t i = 0; i < set_.tables.size(); ++i)
      if (set_.staged(i)) probing(i, [&] { src_.exec(set_.stage_sql(i, rows.root)); });
  }

  // Root rows of the batch that stay because rows still reference them (no --cascade).
  std::int64_t count_refused(const BatchRows& rows) {
    if (set_.cascade || set_.referencing.empty()) return 0;
    return std::stoll(src_.query("SELECT count(*) FROM " + set_.tables[0].quoted + " t0 WHERE " +
                                 set_.refused_filter(rows.low_or_null(), rows.high))[0][0]);
  }

  static std::string copy_of(const std::string& query) { return "COPY (" + query + ") TO STDOUT"; }

  // Parents first at the destination: the staged tables are copied as they are. Returns what
  // streamed per table (nothing yet for the leaves).
  std::vector<TableStats> load_staged_parents_first(const BatchRows& rows, const std::string& extra) {
    std::vector<TableStats> sent(set_.tables.size());
    for (std::size_t i = 0; i < set_.tables.size(); ++i)
      if (set_.staged(i))
        sent[i] = delivery_->load(rows.ref, set_, i, src_, copy_of(set_.select_sql(i, set_.rows_of(i, rows.root), extra)));
    return sent;
  }

  // ... then children first at the source. A leaf's DELETE ... RETURNING streams straight into
  // the destination: what it removes is what arrives, counted and hashed on the way (and `sent`
  // gets it). A staged table's DELETE streams the same columns back here, and must remove exactly
  // what was copied. Returns what was deleted per table.
  std::vector<TableStats> delete_children_first(const BatchRows& rows, const std::string& extra, std::vector<TableStats>& sent) {
    std::vector<TableStats> deleted(set_.tables.size());
    for (std::size_t k = set_.tables.size(); k-- > 0;) {
      std::string remove = copy_of(set_.delete_sql(k, set_.rows_of(k, rows.root), extra));
      if (!set_.staged(k)) {
        probing(k, [&] { sent[k] = deleted[k] = delivery_->load(rows.ref, set_, k, src_, remove); });
        continue;
      }
      digest::RowDigest d;
      shardio::copy_out_to(src_, remove, [&](std::string_view chunk) { d.add(chunk); });
      deleted[k] = {d.rows(), d.text()};
      if (deleted[k] != sent[k])
        throw internal_error("the DELETE of batch " + std::to_string(rows.ref.batch_no) + " of " + set_.tables[k].name +
                             " on shard " + shard_.name + " removed " + std::to_string(deleted[k].rows) + " rows (digest " +
                             deleted[k].checksum + "), not the " + std::to_string(sent[k].rows) + " copied (digest " +
                             sent[k].checksum + ")",
                             "nothing was deleted; `shardctl op resume ID` takes the batch again");
    }
    return deleted;
  }

  // The destination, read back, holds what the source deleted; it commits. Returns the batch's
  // tables as the journal records them.
  nlohmann::json deliver(const BatchRef& ref, const std::vector<TableStats>& deleted) {
    for (std::size_t i = 0; i < set_.tables.size(); ++i) delivery_->verify(ref, set_, i, deleted[i]);
    delivery_->commit(ref, set_);
    run_.point("archive-delivered", shard_.name, ref.batch_no);
    auto tables = stats_json(set_, deleted);
    journal([&](pqxx::work& tx) { mark_delivered(tx, run_.run, shard_id_, ref.batch_no, tables); });
    run_.point("archive-journaled-delivery", shard_.name, ref.batch_no);
    return tables;
  }

  // The source commits its DELETEs together with the batch's receipt, then the journal says so.
  void commit_source(const BatchState& batch, const nlohmann::json& tables, std::int64_t refused) {
    shardside::insert_archive_receipt(src_, run_.run, batch.batch_no, {tables.dump(), refused});
    src_.exec("COMMIT");
    run_.point("archive-committed", shard_.name, batch.batch_no);
    journal([&](pqxx::work& tx) { mark_deleted(tx, run_.run, shard_id_, batch, tables, refused); });
    run_.point("archive-journaled", shard_.name, batch.batch_no);
    report(tables);
  }

  // Runs `body` with hash and merge joins off when table `i` is found from its parent's stage
  // through an index on its foreign key: index probes, whatever the planner guesses the stage holds.
  void probing(std::size_t i, const std::function<void()>& body) {
    bool probe = set_.tables[i].fk_indexed;
    if (probe) src_.script("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off");
    body();
    if (probe) src_.script("RESET enable_hashjoin; RESET enable_mergejoin");
  }

  void report(const nlohmann::json& tables) {
    std::int64_t rows = 0;
    for (const auto& [name, s] : tables.items()) rows += s.value("rows", std::int64_t{0});
    if (run_.on_batch) {
      std::lock_guard lock(run_.mu);
      run_.on_batch(shard_.name, rows);
    }
  }

  // --max-lag: waits while a streaming replica of the shard replays further behind.
  void wait_for_replicas() {
    if (!run_.job.max_lag) return;
    double limit = static_cast<double>(run_.job.max_lag->count()) / 1000.0;
    bool said = false;
    for (;;) {
      auto r = src_.query("SELECT coalesce(extract(epoch FROM max(replay_lag)), 0)::float8 FROM pg_stat_replication");
      double lag = std::stod(r[0][0]);
      if (lag <= limit) return;
      if (!said && run_.on_note) {
        std::lock_guard lock(run_.mu);
        run_.on_note("shard " + shard_.name + ": a replica replays " + r[0][0] + " s behind (limit " +
                     std::to_string(limit) + " s); waiting");
      }
      said = true;
      if (run_.stopping()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  // A catalog write of this run: only while this process still holds it (fencing token).
  void journal(const std::function<void(pqxx::work&)>& body) {
    catalog_.transact([&](pqxx::work& tx) {
      journal::check_fencing_token(tx, run_.run, run_.token);
      body(tx);
      journal::heartbeat(tx, run_.run, "archiving");
    });
  }

  RunShared& run_;
  const catalog::Shard& shard_;
  std::int64_t shard_id_;
  pg::Connection catalog_;
  shardio::RawConn src_;
  ArchiveSet set_;
  std::unique_ptr<Delivery> delivery_;
  std::optional<std::int64_t> map_id_;
  std::string key_column_;
  shardio::RouteSpace space_{};
};

}  // namespace

void archive_shard(RunShared& run, const catalog::Shard& shard, std::int64_t shard_id) {
  ShardWorker(run, shard, shard_id).run();
}

}  // namespace shardctl::archive
