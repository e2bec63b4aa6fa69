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

std::size_t index_of(const std::vector<Reader>& readers, const std::string& shard) {
  for (std::size_t i = 0; i < readers.size(); ++i)
    if (readers[i].shard == shard) return i;
  return readers.size();
}

TableReport compare_table(std::vector<Reader>& readers, const RefTable& table, int parallel) {
  TableReport report;
  report.table = table.name;
  std::size_t n = readers.size();
  // The source: the named shard or outside database, else (src == n) the majority.
  std::size_t src = n;
  if (table.source || table.source_dsn) {
    report.source_named = true;
    src = index_of(readers, table.source_dsn ? outside_source_name(*table.source_dsn) : *table.source);
    if (src == n || !readers[src].conn) return report;  // the source is down (or not swept): nothing to compare with
  }
  std::vector<Shape> shapes(n);
  std::vector<std::int64_t> estimates(n, 0);
  on_readers(readers, parallel, [&](std::size_t i) {
    if (!readers[i].copy && i != src) return;
    shapes[i] = read_shape(*readers[i].conn, table.quoted);
    if (shapes[i].exists) estimates[i] = estimate_rows(*readers[i].conn, table.quoted);
  });
  if (src != n && !readers[src].conn) return report;

  // The shape every copy must have: the source's, else the most common one.
  Shape want;
  if (src != n) {
    want = shapes[src];
  } else {
    std::size_t best = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!readers[i].conn || !readers[i].copy) continue;
      auto count = std::count_if(shapes.begin(), shapes.end(), [&](const Shape& s) { return s == shapes[i]; });
      if (static_cast<std::size_t>(count) > best) best = static_cast<std::size_t>(count), want = shapes[i];
    }
  }
  std::vector<std::size_t> compared;
  for (std::size_t i = 0; i < n; ++i) {
    if (!readers[i].conn || !readers[i].copy) continue;
    if (!(shapes[i] == want)) {
      report.drift.push_back({readers[i].shard, !shapes[i].exists ? "the table is missing"
                                                : "columns " + shapes[i].column_list() + "; the " +
                                                      (src != n ? "source's: " : "majority's: ") + want.column_list()});
      continue;
    }
    if (want.exists) compared.push_back(i);
  }
  if (compared.empty() || !want.exists) return report;
  report.by_row = want.key.empty();
  std::int64_t most = src != n ? estimates[src] : 0;
  for (auto i : compared) most = std::max(most, estimates[i]);
  report.chunks = chunk_count(most);
  KeySpec key = key_spec(*readers[compared.front()].conn, want);

  std::vector<ChunkDigests> digests(n);
  on_readers(readers, parallel, [&](std::size_t i) {
    if (i == src || std::find(compared.begin(), compared.end(), i) != compared.end())
      digests[i] = chunk_digests(*readers[i].conn, table.quoted, key, report.chunks);
  });
  std::erase_if(compared, [&](std::size_t i) { return !readers[i].conn; });
  if (src != n && !readers[src].conn) return report;
  report.copies = compared.size();
  if (compared.empty()) return report;
  if (src == n) {
    std::vector<ChunkDigests> copies;
    for (auto i : compared) copies.push_back(digests[i]);
    auto m = majority(copies);
    if (m.tie) {
      for (const auto& g : m.groups) {
        std::vector<std::string> names;
        for (auto k : g) names.push_back(readers[compared[k]].shard);
        report.tie.push_back(names);
      }
      return report;
    }
    src = compared[m.winners().front()];
  }
  report.source = readers[src].shard;

  // The per-row pass: only the chunks that differ, the source's rows read once for all copies.
  std::map<std::size_t, std::vector<std::int64_t>> differing;
  std::vector<std::int64_t> all;
  for (auto i : compared) {
    if (i == src) continue;
    auto d = differing_chunks(digests[src], digests[i]);
    if (d.empty()) continue;
    differing[i] = d;
    all.insert(all.end(), d.begin(), d.end());
  }
  if (differing.empty()) return report;
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  auto source_rows = chunk_rows(*readers[src].conn, table.quoted, key, report.chunks, all);
  std::vector<std::vector<ChunkRow>> copy_rows(n);
  on_readers(readers, parallel, [&](std::size_t i) {
    if (differing.count(i)) copy_rows[i] = chunk_rows(*readers[i].conn, table.quoted, key, report.chunks, differing[i]);
  });
  for (const auto& [i, chunks] : differing) {
    if (!readers[i].conn) continue;
    std::vector<RowHash> mine, theirs;
    for (const auto& r : source_rows)
      if (std::binary_search(chunks.begin(), chunks.end(), r.chunk)) mine.push_back(r.row);
    for (const auto& r : copy_rows[i]) theirs.push_back(r.row);
    report.differs.push_back({readers[i].shard, static_cast<std::int64_t>(chunks.size()), classify(mine, theirs, report.by_row)});
  }
  return report;
}

std::vector<TableReport> compare_all(std::vector<Reader>& readers, const std::vector<RefTable>& tables, int parallel) {
  std::vector<TableReport> out;
  for (const auto& t : tables) out.push_back(compare_table(readers, t, parallel));
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
