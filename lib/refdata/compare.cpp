#include "refdata/compare.hpp"

#include <algorithm>
#include <memory>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "pg/dsn.hpp"
#include "refdata/copy.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/server_pool.hpp"

namespace shardctl::refdata {
namespace {

// A reader of one copy: a shard or a source outside the fleet. compare_fleet's readers take a
// connection from the run's pool for each visit; compare_pair's have the caller's.
struct Reader {
  std::string shard;
  std::string dsn;
  std::string role;
  shardio::RawConn* own = nullptr;  // compare_pair: the caller's connection
  bool copy = true;   // false: a source outside the fleet, compared with but never a copy
  bool down = false;  // unreachable (or gone): compared with nothing from then on
  bool refused = false;  // down because its server was out of connection slots
  std::string error;
};

// The visits of a comparison to its readers: `parallel` at once, each on a connection from the
// pool (at most --parallel per server) or the reader's own. A reader whose server cannot be
// reached (or goes away) is marked down; other errors propagate.
class Visits {
 public:
  Visits(std::vector<Reader>& readers, int parallel, shardio::ServerPool* pool)
      : readers_(readers), parallel_(parallel), pool_(pool) {}

  // work(i, conn) on every reader that is up and that wanted(i) selects.
  template <class Wanted, class Work>
  void each(Wanted wanted, Work work) {
    std::vector<std::size_t> chosen;
    for (std::size_t i = 0; i < readers_.size(); ++i)
      if (!readers_[i].down && wanted(i)) chosen.push_back(i);
    parallel_for(chosen.size(), parallel_, [&](std::size_t k) { visit(chosen[k], work); });
  }

  // work(i, conn) on reader i alone, when it is up.
  template <class Work>
  void one(std::size_t i, Work work) {
    if (!readers_[i].down) visit(i, work);
  }

 private:
  template <class Work>
  void visit(std::size_t i, Work& work) {
    try {
      if (readers_[i].own) {
        work(i, *readers_[i].own);
        return;
      }
      auto lease = pool_->acquire(readers_[i].dsn, readers_[i].role, shardio::session_settings);
      work(i, *lease);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unavailable) throw;
      readers_[i].down = true;
      readers_[i].refused = refused_for_connections(e);
      readers_[i].error = e.what();
    }
  }

  std::vector<Reader>& readers_;
  int parallel_;
  shardio::ServerPool* pool_;
};

// One table's comparison across the readers, step by step (plan.hpp says why in this order):
// the shapes; one whole-table digest per copy; the source (named, else the majority of the whole
// digests); the chunking, range chunks' bounds sampled on the source; chunk digests on the source
// and on the copies whose whole digest differs only; the rows of the differing chunks only.
// The first two steps of every table are taken in one visit per reader (compare_all), so that a
// shard is connected to twice for any number of tables, not twice per table.
class TableComparison {
 public:
  TableComparison(std::vector<Reader>& readers, const RefTable& table, Visits& visits)
      : readers_(readers), table_(table), visits_(visits), n_(readers.size()), src_(readers.size()) {
    report_.table = table.name;
    shapes_.assign(n_, Shape{});
    estimates_.assign(n_, 0);
    probes_.assign(n_, "");
    whole_.assign(n_, ChunkDigest{});
    chunks_.assign(n_, ChunkDigests{});
    which_.assign(n_, false);
    locate_named_source();
  }

  // Step 1, on reader i: the copy's shape (a named source outside the fleet is read for its own
  // tables only).
  bool wants_shape(std::size_t i) const { return readers_[i].copy || i == src_; }
  void read_shape_on(std::size_t i, shardio::RawConn& conn) {
    shapes_[i] = read_shape(conn, table_.quoted);
    if (!shapes_[i].exists) return;
    estimates_[i] = estimate_rows(conn, table_.quoted);
    if (has_numeric(shapes_[i])) probes_[i] = numeric_probe(conn);
  }

  // After step 1: false when there is nothing to compare (the named source is down, no shape).
  bool after_shapes() {
    active_ = (!named() || (src_ != n_ && up(src_))) && choose_shape();
    if (active_)
      for (auto i : with_source()) which_[i] = true;
    return active_;
  }

  // Step 2, on reader i: the whole digest of every copy. A named source's chunk digests are
  // taken at once instead (its whole digest is their total): when a copy differs they are
  // needed, and they cost the source a third more than its whole digest alone, not a second
  // scan. Its range chunks' bounds are sampled just before (the other copies are cut by them
  // in the chunk pass only).
  bool wants_whole(std::size_t i) const { return active_ && which_[i]; }
  void digest_whole_on(std::size_t i, shardio::RawConn& conn) {
    if (i != src_) {
      whole_[i] = whole_digest(conn, table_.quoted, key_);
      return;
    }
    plan_chunks_on(i, conn);
    chunks_[i] = chunk_digests(conn, table_.quoted, key_, chunking_);
    whole_[i] = total(chunks_[i]);
  }

  // The rest, for this table alone (few readers: the source and the copies that differ).
  TableReport finish() {
    if (!active_) return report_;
    std::erase_if(compared_, [&](std::size_t i) { return !up(i); });
    report_.copies = compared_.size();
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
  bool up(std::size_t i) const { return !readers_[i].down; }
  bool named() const { return table_.source || table_.source_dsn; }
  bool source_down() const { return src_ != n_ && !up(src_); }

  // The named shard or outside database as the source (src_), if any.
  void locate_named_source() {
    if (!named()) return;
    report_.source_named = true;
    std::string name = table_.source_dsn ? outside_source_name(*table_.source_dsn) : *table_.source;
    for (src_ = 0; src_ < n_ && readers_[src_].shard != name; ++src_) {
    }
  }

  // The shape every copy must have: the source's, else the most common one. Copies of another
  // shape are drift; the others are compared_. False: nothing to compare.
  bool choose_shape() {
    Shape want;
    if (src_ != n_) want = shapes_[src_];
    // The most common shape, counted once per distinct shape (not once per copy: a fleet of
    // thousands of copies would count every copy against every other).
    std::vector<std::pair<const Shape*, std::size_t>> counts;
    for (std::size_t i = 0; i < n_ && src_ == n_; ++i) {
      if (!up(i) || !readers_[i].copy) continue;
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return *c.first == shapes_[i]; });
      if (it == counts.end()) counts.emplace_back(&shapes_[i], 1);
      else ++it->second;
    }
    std::size_t best = 0;
    for (const auto& [shape, count] : counts)
      if (count > best) best = count, want = *shape;
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
    // The key is read on one copy; one that went away meanwhile hands the question on.
    for (auto i : compared_) {
      bool asked = false;
      visits_.one(i, [&](std::size_t, shardio::RawConn& conn) {
        key_ = key_spec(conn, want, probes_agree);
        asked = true;
      });
      if (asked) return true;
    }
    return false;
  }

  // compared_, and the named source when it is not among them.
  std::vector<std::size_t> with_source() const {
    auto out = compared_;
    if (src_ != n_ && std::find(out.begin(), out.end(), src_) == out.end()) out.push_back(src_);
    return out;
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
  void plan_chunks_on(std::size_t i, shardio::RawConn& conn) {
    chunking_ = plan_chunks(conn, table_.quoted, key_, report_.chunks, estimates_[i]);
    report_.chunks = chunking_.count;
  }

  // The chunk digests of the differing copies and of the source (a majority one, its chunking
  // decided first: a named one has them already); differing_ gets each copy's differing chunks
  // (a copy whose chunks all agree after all, changed meanwhile, is dropped).
  void digest_chunks() {
    bool source_has = named();
    if (!source_has) visits_.one(src_, [&](std::size_t i, shardio::RawConn& conn) { plan_chunks_on(i, conn); });
    if (!up(src_)) return;  // nothing to compare the chunks with
    visits_.each([&](std::size_t i) { return (i == src_ && !source_has) || differing_.count(i); },
                 [&](std::size_t i, shardio::RawConn& conn) { chunks_[i] = chunk_digests(conn, table_.quoted, key_, chunking_); });
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
    visits_.each([&](std::size_t i) { return i == src_ || differing_.count(i) > 0; },
                 [&](std::size_t i, shardio::RawConn& conn) {
                   rows[i] = chunk_rows(conn, table_.quoted, key_, chunking_, i == src_ ? all : differing_.at(i));
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
  Visits& visits_;
  std::size_t n_;
  std::size_t src_;  // the source's reader; n_ while none is known
  bool active_ = false;
  std::vector<bool> which_;  // the readers step 2 visits
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

std::vector<TableReport> compare_all(std::vector<Reader>& readers, const std::vector<RefTable>& tables, Visits& visits) {
  std::vector<TableComparison> each;
  each.reserve(tables.size());
  for (const auto& t : tables) each.emplace_back(readers, t, visits);
  auto any = [&](auto wants) {
    return [&each, wants](std::size_t i) { return std::any_of(each.begin(), each.end(), [&](const auto& c) { return (c.*wants)(i); }); };
  };
  visits.each(any(&TableComparison::wants_shape), [&](std::size_t i, shardio::RawConn& conn) {
    for (auto& c : each)
      if (c.wants_shape(i)) c.read_shape_on(i, conn);
  });
  for (auto& c : each) c.after_shapes();
  visits.each(any(&TableComparison::wants_whole), [&](std::size_t i, shardio::RawConn& conn) {
    for (auto& c : each)
      if (c.wants_whole(i)) c.digest_whole_on(i, conn);
  });
  std::vector<TableReport> out;
  for (auto& c : each) out.push_back(c.finish());
  return out;
}

}  // namespace

std::string outside_source_name(const std::string& dsn) { return "outside the fleet (" + pg::describe_dsn(dsn) + ")"; }

FleetReport compare_fleet(const std::vector<ShardRef>& shards, const std::vector<RefTable>& tables, int parallel) {
  FleetReport report;
  std::vector<Reader> readers;
  auto reader = [&](const std::string& name, const std::string& dsn, const std::string& role, bool copy) {
    Reader r;
    r.shard = name;
    r.dsn = dsn;
    r.role = role;
    r.copy = copy;
    readers.push_back(std::move(r));
  };
  for (const auto& s : shards) reader(s.name, s.dsn, "shard " + s.name, true);
  for (const auto& t : tables) {
    if (!t.source_dsn) continue;
    std::string name = outside_source_name(*t.source_dsn);
    if (std::none_of(readers.begin(), readers.end(), [&](const Reader& r) { return r.shard == name; }))
      reader(name, *t.source_dsn, "the source " + name, false);
  }
  // Every connection comes from one pool: at most `parallel` per server.
  shardio::ServerPool pool(parallel);
  Visits visits(readers, parallel, &pool);
  report.tables = compare_all(readers, tables, visits);
  for (const auto& r : readers)
    if (r.down) report.unreachable.push_back({r.shard, r.error, r.refused});
  return report;
}

std::vector<TableReport> compare_pair(const std::string& source_name, shardio::RawConn& source,
                                      const std::string& target_name, shardio::RawConn& target,
                                      const std::vector<RefTable>& tables) {
  std::vector<Reader> readers(2);
  readers[0].shard = source_name;
  readers[0].own = &source;
  readers[1].shard = target_name;
  readers[1].own = &target;
  std::vector<RefTable> named = tables;
  for (auto& t : named) t.source = source_name, t.source_dsn.reset();
  Visits visits(readers, 2, nullptr);
  auto out = compare_all(readers, named, visits);
  for (const auto& r : readers)
    if (r.down) throw unavailable_error("shard " + r.shard + " went away while its reference tables were compared: " + r.error);
  return out;
}

}  // namespace shardctl::refdata
