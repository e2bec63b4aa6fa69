#include "refdata/compare.hpp"

#include <algorithm>
#include <memory>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "pg/dsn.hpp"
#include "refdata/copy.hpp"
#include "shardio/row_checksum.hpp"

namespace shardctl::refdata {
namespace {

// A shard's connection for the whole comparison; null once the shard proved unreachable.
struct Reader {
  std::string shard;
  shardio::RawConn* conn = nullptr;
  std::string error;
  bool copy = true;  // false: a source outside the fleet, compared with but never a copy
};

// Runs `work(i)` on every reachable reader; a reader whose server goes away is marked down.
template <class Work>
void on_readers(std::vector<Reader>& readers, int parallel, Work work) {
  parallel_for(readers.size(), parallel, [&](std::size_t i) {
    if (!readers[i].conn) return;
    try {
      work(i);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unavailable) throw;
      readers[i].conn = nullptr;
      readers[i].error = e.what();
    }
  });
}

// One table's comparison across the readers, step by step (plan.hpp says why in this order):
// the shapes; one whole-table digest per copy; the source (named, else the majority of the whole
// digests); the chunking, range chunks' bounds sampled on the source; chunk digests on the source
// and on the copies whose whole digest differs only; the rows of the differing chunks only.
class TableComparison {
 public:
  TableComparison(std::vector<Reader>& readers, const RefTable& table, int parallel)
      : readers_(readers), table_(table), parallel_(parallel), n_(readers.size()), src_(readers.size()) {
    report_.table = table.name;
  }

  TableReport run() {
    if (!named_source_up()) return report_;
    read_shapes();
    if (source_down() || !choose_shape()) return report_;
    digest_whole();
    if (source_down() || compared_.empty()) return report_;
    if (!choose_source()) return report_;
    report_.source = readers_[src_].shard;
    for (auto i : compared_)
      if (i != src_ && !(whole_[i] == whole_[src_])) differing_[i] = {};
    if (differing_.empty()) return report_;
    digest_chunks();
    if (up(src_) && !differing_.empty()) compare_rows();
    return report_;
  }

 private:
  bool up(std::size_t i) const { return readers_[i].conn != nullptr; }
  bool named() const { return table_.source || table_.source_dsn; }
  bool source_down() const { return src_ != n_ && !up(src_); }

  // The named shard or outside database as the source (src_), if any; false when it is down
  // (or not swept): nothing to compare with.
  bool named_source_up() {
    if (!named()) return true;
    report_.source_named = true;
    std::string name = table_.source_dsn ? outside_source_name(*table_.source_dsn) : *table_.source;
    for (src_ = 0; src_ < n_ && readers_[src_].shard != name; ++src_) {
    }
    return src_ != n_ && up(src_);
  }

  void read_shapes() {
    shapes_.assign(n_, Shape{});
    estimates_.assign(n_, 0);
    probes_.assign(n_, "");
    on_readers(readers_, parallel_, [&](std::size_t i) {
      if (!readers_[i].copy && i != src_) return;
      auto& conn = *readers_[i].conn;
      shapes_[i] = read_shape(conn, table_.quoted);
      if (!shapes_[i].exists) return;
      estimates_[i] = estimate_rows(conn, table_.quoted);
      if (has_numeric(shapes_[i])) probes_[i] = numeric_probe(conn);
    });
  }

  // The shape every copy must have: the source's, else the most common one. Copies of another
  // shape are drift; the others are compared_. False: nothing to compare.
  bool choose_shape() {
    Shape want;
    if (src_ != n_) want = shapes_[src_];
    std::size_t best = 0;
    for (std::size_t i = 0; i < n_ && src_ == n_; ++i) {
      if (!up(i) || !readers_[i].copy) continue;
      auto count = static_cast<std::size_t>(std::count(shapes_.begin(), shapes_.end(), shapes_[i]));
      if (count > best) best = count, want = shapes_[i];
    }
    for (std::size_t i = 0; i < n_; ++i) {
      if (!up(i) || !readers_[i].copy) continue;
      if (shapes_[i] == want) {
        if (want.exists) compared_.push_back(i);
        continue;
      }
      report_.drift.push_back({readers_[i].shard, !shapes_[i].exists ? "the table is missing"
                                                  : "columns " + shapes_[i].column_list() + "; the " +
                                                        (src_ != n_ ? "source's: " : "majority's: ") + want.column_list()});
    }
    if (compared_.empty() || !want.exists) return false;
    report_.by_row = want.key.empty();
    std::int64_t most = src_ != n_ ? estimates_[src_] : 0;
    bool probes_agree = true;
    for (auto i : with_source()) {
      most = std::max(most, estimates_[i]);
      want = not_null_in_both(want, shapes_[i]);
      probes_agree = probes_agree && probes_[i] == probes_[compared_.front()];
    }
    report_.chunks = chunk_count(most);
    chunking_ = {report_.chunks, ""};
    key_ = key_spec(*readers_[compared_.front()].conn, want, probes_agree);
    return true;
  }

  // compared_, and the named source when it is not among them.
  std::vector<std::size_t> with_source() const {
    auto out = compared_;
    if (src_ != n_ && std::find(out.begin(), out.end(), src_) == out.end()) out.push_back(src_);
    return out;
  }

  // The whole digest of every copy. A named source's chunk digests are taken at once instead
  // (its whole digest is their total): when a copy differs they are needed, and they cost the
  // source a third more than its whole digest alone, not a second scan. Its range chunks'
  // bounds are sampled just before (the other copies are cut by them in the chunk pass only).
  void digest_whole() {
    whole_.assign(n_, ChunkDigest{});
    chunks_.assign(n_, ChunkDigests{});
    auto which = with_source();
    on_readers(readers_, parallel_, [&](std::size_t i) {
      if (std::find(which.begin(), which.end(), i) == which.end()) return;
      if (i != src_) {
        whole_[i] = whole_digest(*readers_[i].conn, table_.quoted, key_);
        return;
      }
      plan_chunks_on(i);
      chunks_[i] = chunk_digests(*readers_[i].conn, table_.quoted, key_, chunking_);
      whole_[i] = total(chunks_[i]);
    });
    std::erase_if(compared_, [&](std::size_t i) { return !up(i); });
    report_.copies = compared_.size();
  }

  // Without a named source, the copy most others agree with (src_); false on a tie.
  bool choose_source() {
    if (src_ != n_) return true;
    std::vector<ChunkDigest> copies;
    for (auto i : compared_) copies.push_back(whole_[i]);
    auto m = majority(copies);
    if (!m.tie) {
      src_ = compared_[m.winners().front()];
      return true;
    }
    for (const auto& g : m.groups) {
      std::vector<std::string> names;
      for (auto k : g) names.push_back(readers_[compared_[k]].shard);
      report_.tie.push_back(names);
    }
    return false;
  }

  // How every copy is cut (plan_chunks), decided on the source, reader i.
  void plan_chunks_on(std::size_t i) {
    chunking_ = plan_chunks(*readers_[i].conn, table_.quoted, key_, report_.chunks, estimates_[i]);
    report_.chunks = chunking_.count;
  }

  // The chunk digests of the differing copies and of the source (a majority one, its chunking
  // decided first: a named one has them already); differing_ gets each copy's differing chunks
  // (a copy whose chunks all agree after all, changed meanwhile, is dropped).
  void digest_chunks() {
    bool source_has = named();
    if (!source_has)
      on_readers(readers_, parallel_, [&](std::size_t i) {
        if (i == src_) plan_chunks_on(i);
      });
    if (!up(src_)) return;  // nothing to compare the chunks with
    on_readers(readers_, parallel_, [&](std::size_t i) {
      if ((i == src_ && !source_has) || differing_.count(i))
        chunks_[i] = chunk_digests(*readers_[i].conn, table_.quoted, key_, chunking_);
    });
    for (auto it = differing_.begin(); it != differing_.end();) {
      it->second = up(it->first) ? differing_chunks(chunks_[src_], chunks_[it->first]) : std::vector<std::int64_t>{};
      it = it->second.empty() ? differing_.erase(it) : std::next(it);
    }
  }

  // The rows of the differing chunks: the source's read once for all copies, at the same time
  // as the copies' own.
  void compare_rows() {
    std::vector<std::int64_t> all;
    for (const auto& [i, chunks] : differing_) all.insert(all.end(), chunks.begin(), chunks.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<std::vector<ChunkRow>> rows(n_);
    on_readers(readers_, parallel_, [&](std::size_t i) {
      if (i == src_) rows[i] = chunk_rows(*readers_[i].conn, table_.quoted, key_, chunking_, all);
      else if (differing_.count(i)) rows[i] = chunk_rows(*readers_[i].conn, table_.quoted, key_, chunking_, differing_[i]);
    });
    if (!up(src_)) return;
    for (const auto& [i, chunks] : differing_) {
      if (!up(i)) continue;
      std::vector<RowHash> mine, theirs;
      for (const auto& r : rows[src_])
        if (std::binary_search(chunks.begin(), chunks.end(), r.chunk)) mine.push_back(r.row);
      for (const auto& r : rows[i]) theirs.push_back(r.row);
      report_.differs.push_back(
          {readers_[i].shard, static_cast<std::int64_t>(chunks.size()), classify(mine, theirs, report_.by_row)});
    }
  }

  std::vector<Reader>& readers_;
  const RefTable& table_;
  int parallel_;
  std::size_t n_;
  std::size_t src_;  // the source's reader; n_ while none is known
  TableReport report_;
  std::vector<Shape> shapes_;
  std::vector<std::int64_t> estimates_;
  std::vector<std::string> probes_;  // numeric_probe's answers, where a copy has a numeric column
  std::vector<std::size_t> compared_;
  KeySpec key_;
  Chunking chunking_;  // how every copy is cut: planned from the estimates, decided on the source
  std::vector<ChunkDigest> whole_;
  std::vector<ChunkDigests> chunks_;
  std::map<std::size_t, std::vector<std::int64_t>> differing_;  // copy -> its differing chunks
};

std::vector<TableReport> compare_all(std::vector<Reader>& readers, const std::vector<RefTable>& tables, int parallel) {
  std::vector<TableReport> out;
  for (const auto& t : tables) out.push_back(TableComparison(readers, t, parallel).run());
  return out;
}

}  // namespace

std::string outside_source_name(const std::string& dsn) { return "outside the fleet (" + pg::describe_dsn(dsn) + ")"; }

FleetReport compare_fleet(const std::vector<ShardRef>& shards, const std::vector<RefTable>& tables, int parallel) {
  FleetReport report;
  std::vector<ShardRef> sources = shards;
  std::vector<Reader> readers(shards.size());
  for (const auto& t : tables) {
    if (!t.source_dsn) continue;
    std::string name = outside_source_name(*t.source_dsn);
    if (std::none_of(sources.begin(), sources.end(), [&](const ShardRef& s) { return s.name == name; })) {
      sources.push_back({name, *t.source_dsn});
      readers.push_back({name, nullptr, "", false});
    }
  }
  std::vector<std::unique_ptr<shardio::RawConn>> conns(sources.size());
  parallel_for(sources.size(), parallel, [&](std::size_t i) {
    readers[i].shard = sources[i].name;
    try {
      std::string role = (i < shards.size() ? "shard " : "the source ") + sources[i].name;
      conns[i] = std::make_unique<shardio::RawConn>(sources[i].dsn, role);
      conns[i]->script(shardio::session_settings);
      readers[i].conn = conns[i].get();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unavailable) throw;
      readers[i].error = e.what();
    }
  });
  report.tables = compare_all(readers, tables, parallel);
  for (const auto& r : readers)
    if (!r.conn) report.unreachable.push_back({r.shard, r.error});
  return report;
}

std::vector<TableReport> compare_pair(const std::string& source_name, shardio::RawConn& source,
                                      const std::string& target_name, shardio::RawConn& target,
                                      const std::vector<RefTable>& tables) {
  std::vector<Reader> readers{{source_name, &source, ""}, {target_name, &target, ""}};
  std::vector<RefTable> named = tables;
  for (auto& t : named) t.source = source_name, t.source_dsn.reset();
  auto out = compare_all(readers, named, 2);
  for (const auto& r : readers)
    if (!r.conn) throw unavailable_error("shard " + r.shard + " went away while its reference tables were compared: " + r.error);
  return out;
}

}  // namespace shardctl::refdata
