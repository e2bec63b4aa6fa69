// postgres: destination. Per source table an archive table of the same name in the archive
// database (archive_table.hpp); each batch is one transaction there that first deletes the rows
// of (source_shard, archived_at), then copies the batch in and checks count and checksum.
#include "archive/archive_table.hpp"
#include "archive/delivery.hpp"
#include "catalog/names.hpp"
#include "core/error.hpp"
#include "digest/row_digest.hpp"
#include "shardio/row_checksum.hpp"

namespace shardctl::archive {
namespace {
using catalog::quote_ident;

// The archive table's columns as the batch's COPY streams them: the source table's, then
// source_shard and archived_at.
std::string stored_columns(const ArchivedTable& t) {
  return t.column_list() + ", " + quote_ident(source_shard_column) + ", " + quote_ident(archived_at_column);
}

std::string batch_where() {
  return quote_ident(source_shard_column) + " = $1 AND " + quote_ident(archived_at_column) + " = $2::timestamptz";
}

class PgDelivery : public Delivery {
 public:
  explicit PgDelivery(const Destination& to) : to_(to) {}

  void prepare(const ArchiveSet& set, bool create) override {
    auto& c = conn();
    for (const auto& t : set.tables) {
      auto existing = shardio::table_columns(c, t.quoted);
      if (existing.empty() && !create) continue;  // a dry run: the real run creates it
      if (existing.empty()) {
        for (const auto& sql : archive_table_ddl(t.schema, t.table, t.columns)) c.exec(sql);
        existing = shardio::table_columns(c, t.quoted);
      }
      require_matching_columns(t.columns, existing, t.name + " in " + to_.describe());
    }
  }

  void begin(const BatchRef& b, const ArchiveSet& set) override {
    auto& c = conn();
    c.exec("BEGIN");
    open_ = true;
    for (const auto& t : set.tables) c.query("DELETE FROM " + t.quoted + " WHERE " + batch_where(), {b.shard, b.archived_at});
  }

  // The source adds the two archive columns as literals, so the rows stream unparsed.
  std::string extra_columns(const BatchRef& b, shardio::RawConn& source) const override {
    return source.literal(b.shard) + "::text, " + source.literal(b.archived_at) + "::timestamptz";
  }

  TableStats load(const BatchRef&, const ArchiveSet& set, std::size_t i, shardio::RawConn& source,
                  const std::string& copy_out_sql) override {
    const auto& t = set.tables.at(i);
    std::string in = "COPY " + t.quoted + " (" + stored_columns(t) + ") FROM STDIN";
    digest::RowDigest d;
    shardio::copy_in_from(conn(), in, [&](const auto& put) {
      shardio::copy_out_to(source, copy_out_sql, [&](std::string_view chunk) {
        d.add(chunk);
        put(chunk);
      });
    });
    return {d.rows(), d.text()};
  }

  void verify(const BatchRef& b, const ArchiveSet& set, std::size_t i, const TableStats& expected) override {
    const auto& t = set.tables.at(i);
    auto& c = conn();
    // Read back in the columns and text form the source streamed them in (COPY takes no parameters).
    std::string out = "COPY (SELECT " + stored_columns(t) + " FROM " + t.quoted + " WHERE " +
                      quote_ident(source_shard_column) + " = " + c.literal(b.shard) + " AND " +
                      quote_ident(archived_at_column) + " = " + c.literal(b.archived_at) + "::timestamptz) TO STDOUT";
    digest::RowDigest d;
    shardio::copy_out_to(c, out, [&](std::string_view chunk) { d.add(chunk); });
    if (d.rows() != expected.rows || d.text() != expected.checksum)
      throw data_error("batch " + std::to_string(b.batch_no) + " of " + t.name + " from " + b.shard + " arrived at " +
                           to_.describe() + " as " + std::to_string(d.rows()) + " rows (digest " + d.text() +
                           "); the source deleted " + std::to_string(expected.rows) + " (digest " + expected.checksum + ")",
                       "nothing was deleted; `shardctl op resume ID` delivers the batch again");
  }

  void commit(const BatchRef&, const ArchiveSet&) override {
    conn().exec("COMMIT");
    open_ = false;
  }

  void abort() noexcept override {
    if (!open_ || !conn_) return;
    open_ = false;
    try {
      conn_->exec("ROLLBACK");
    } catch (...) {
      conn_.reset();  // a broken session is opened again by the next attempt
    }
  }

 private:
  shardio::RawConn& conn() {
    if (!conn_) {
      conn_ = std::make_unique<shardio::RawConn>(to_.dsn, "archive database");
      conn_->script(shardio::session_settings);
    }
    return *conn_;
  }

  Destination to_;
  std::unique_ptr<shardio::RawConn> conn_;
  bool open_ = false;
};

}  // namespace

std::unique_ptr<Delivery> make_pg_delivery(const Destination& to) { return std::make_unique<PgDelivery>(to); }

}  // namespace shardctl::archive
