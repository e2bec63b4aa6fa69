// dir: destination. Per shard, table and batch one zstd file of COPY text under the run's
// directory; the batch counts as delivered once every file is whole on disk, read back against
// its SHA-256 and against the count and digest of the rows the source deleted, and recorded in
// the manifest (rewritten atomically).
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "archive/archive_table.hpp"
#include "archive/delivery.hpp"
#include "archive/zstd_file.hpp"
#include "core/error.hpp"
#include "digest/row_digest.hpp"

namespace shardctl::archive {
namespace {

// A path component for a name: '/' and '%' are escaped as %2F and %25 (a table may be called
// "a/b"); a leading dot is escaped so no component is "." or "..".
std::string file_component(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '/') out += "%2F";
    else if (c == '%') out += "%25";
    else if (c == '.' && i == 0) out += "%2E";
    else out += c;
  }
  return out;
}

class DirDelivery : public Delivery {
 public:
  DirDelivery(const Destination& to, SharedManifest& manifest) : to_(to), manifest_(manifest) {}

  void prepare(const ArchiveSet& set, bool create) override {
    for (const auto& t : set.tables) ddl_[t.name] = source_table_ddl(t.schema, t.table, t.columns);
    if (!create) return;
    std::error_code ec;
    std::filesystem::create_directories(manifest_.dir(), ec);
    if (ec)
      throw unavailable_error("cannot create the archive directory " + manifest_.dir().string() + ": " + ec.message(),
                              "check the path and its permissions");
    // Written and removed at once: a directory that refuses files is found before anything is deleted.
    // (One name per thread: the shards of a run prepare at once.)
    auto probe = manifest_.dir() / (".shardctl-write-test-" + std::to_string(getpid()) + "-" +
                                    std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())));
    write_file_atomically(probe, "ok\n");
    std::filesystem::remove(probe, ec);
  }

  void begin(const BatchRef&, const ArchiveSet&) override { files_.clear(); }

  // The files hold the table's own columns only: what `COPY t FROM STDIN` loads.
  std::string extra_columns(const BatchRef&, shardio::RawConn&) const override { return ""; }

  TableStats load(const BatchRef& b, const ArchiveSet& set, std::size_t i, shardio::RawConn& source,
                  const std::string& copy_out_sql) override {
    const auto& t = set.tables.at(i);
    char batch[32];
    std::snprintf(batch, sizeof batch, "%06d.copy.zst", b.batch_no);
    std::filesystem::path rel = std::filesystem::path(file_component(b.shard)) / file_component(t.name) / batch;
    ZstdFileWriter writer(manifest_.dir() / rel);
    digest::RowDigest d;
    shardio::copy_out_to(source, copy_out_sql, [&](std::string_view chunk) {
      d.add(chunk);
      writer.write(chunk);
    });
    auto written = writer.finish();
    ManifestFile f;
    f.path = rel.string();
    f.shard = b.shard;
    f.table = t.name;
    f.batch = b.batch_no;
    f.rows = d.rows();
    f.raw_bytes = written.raw_bytes;
    f.bytes = written.compressed_bytes;
    f.sha256 = written.sha256;
    files_.push_back(f);
    return {d.rows(), d.text()};
  }

  void verify(const BatchRef& b, const ArchiveSet& set, std::size_t i, const TableStats& expected) override {
    const auto& t = set.tables.at(i);
    auto it = std::find_if(files_.begin(), files_.end(), [&](const ManifestFile& f) { return f.table == t.name; });
    if (it == files_.end()) throw internal_error("no archive file was written for " + t.name);
    digest::RowDigest d;
    read_zstd_file(manifest_.dir() / it->path, it->sha256, [&](std::string_view chunk) { d.add(chunk); });
    if (d.rows() != expected.rows || d.text() != expected.checksum || !d.complete())
      throw data_error("archive file " + (manifest_.dir() / it->path).string() + " holds " + std::to_string(d.rows()) +
                           " rows (digest " + d.text() + ") of batch " + std::to_string(b.batch_no) + " from " + b.shard +
                           "; the source deleted " + std::to_string(expected.rows) + " (digest " + expected.checksum + ")",
                       "nothing was deleted; `shardctl op resume ID` delivers the batch again");
  }

  void commit(const BatchRef& b, const ArchiveSet&) override { manifest_.record_batch(b.shard, b.batch_no, files_, ddl_); }

  void abort() noexcept override { files_.clear(); }

 private:
  Destination to_;
  SharedManifest& manifest_;
  std::vector<ManifestFile> files_;
  std::map<std::string, std::string> ddl_;
};

}  // namespace

std::unique_ptr<Delivery> make_pg_delivery(const Destination& to);

std::filesystem::path run_directory(const Destination& to, const std::string& run) {
  return std::filesystem::path(to.path) / run;
}

void SharedManifest::record_batch(const std::string& shard, std::int64_t batch, const std::vector<ManifestFile>& files,
                                  const std::map<std::string, std::string>& ddl) {
  std::lock_guard lock(mu_);
  std::erase_if(m_.files, [&](const ManifestFile& f) { return f.shard == shard && f.batch == batch; });
  m_.files.insert(m_.files.end(), files.begin(), files.end());
  for (const auto& [table, text] : ddl) m_.ddl[table] = text;
  write_manifest(dir_, m_);
}

std::unique_ptr<Delivery> make_delivery(const Destination& to, SharedManifest* manifest) {
  if (to.kind == Destination::Kind::postgres) return make_pg_delivery(to);
  return std::make_unique<DirDelivery>(to, *manifest);
}

}  // namespace shardctl::archive
