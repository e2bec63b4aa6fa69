// Runner's verify of an online batch (runner_online.cpp). Writers of the batch's keys wait
// through its cut-over, so the window must be short: the batch is compared ahead of it and the
// window compares only the keys the stream changed since (cut_over_verify.hpp). Each server
// digests rows in one aggregate per table (server_digest.hpp), the source's on a second thread
// while the target's run on this one: no row crosses the network. Where the two servers do not
// digest alike, the window verifies the whole batch (verify_at_cut_over).
#include <algorithm>
#include <future>

#include "catalog/names.hpp"
#include "shardio/raw_conn.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "migrate/copy_sql.hpp"
#include "migrate/runner.hpp"
#include "migrate/server_digest.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/value_digest.hpp"

namespace shardctl::migrate {

namespace {

// Each table's "TAG:COUNT:SUM" over the range on one server.
std::vector<std::string> digest_on(shardio::RawConn& conn, const std::vector<std::string>& selects) {
  std::vector<std::string> out;
  for (const auto& sql : selects) out.push_back(conn.query(sql)[0][0]);
  return out;
}

}  // namespace

bool Runner::servers_digest_alike(const Batch& b) {
  auto it = servers_alike_.find(b.source_id);
  if (it != servers_alike_.end()) return it->second;
  // Text hashes over the bytes each server stores, numerics over its memory order: the two
  // servers' digests compare only where both agree.
  const char* sql = "SELECT current_setting('server_encoding')";
  bool alike = source(b).query(sql)[0][0] == target_->query(sql)[0][0];
  numerics_alike_[b.source_id] = source(b).query(shardio::numeric_probe_sql)[0][0] == target_->query(shardio::numeric_probe_sql)[0][0];
  return servers_alike_[b.source_id] = alike;
}

std::unique_ptr<CutOverVerify> Runner::cut_over_verify(const Batch& b) {
  if (!servers_digest_alike(b)) return nullptr;
  shardio::RawConn& src = source(b);
  bool numerics = numerics_alike_.at(b.source_id);
  std::vector<CutOverTable> tables;
  for (const auto& t : ctx_.tables) {
    auto key = std::find(t.columns.begin(), t.columns.end(), t.key_column);
    if (key == t.columns.end() || t.types.size() != t.columns.size()) return nullptr;
    auto how = server_digest_for(t, numerics);
    tables.push_back({t.name, t.quoted, catalog::quote_ident(t.key_column), t.types[static_cast<std::size_t>(key - t.columns.begin())],
                      "SELECT " + server_digest_select(t, how) + " FROM (SELECT " + column_list(t.columns) + " FROM " + t.quoted + " WHERE ",
                      filter(src, t, b.range), filter(*target_, t, b.range), ") " + std::string(shardio::row_alias), how});
  }
  const auto& from = shard(b.source_id);
  const auto& to = ctx_.target;
  auto session = [](const catalog::Shard& s) {
    return [dsn = s.dsn, role = "shard " + s.name] {
      auto conn = std::make_unique<shardio::RawConn>(dsn, role);
      conn->script(shardio::session_settings);
      return conn;
    };
  };
  return std::make_unique<CutOverVerify>(std::move(tables), guarded(), stream_name(b), session(from), session(to));
}

std::string Runner::verify_at_cut_over(const Batch& b) {
  if (!servers_digest_alike(b)) return verify(b);
  catalog_.read([&](pqxx::work& tx) { fence(tx); });  // as verify(): a process that lost its lease stops here
  shardio::RawConn& src = source(b);
  bool numerics = numerics_alike_.at(b.source_id);
  std::vector<std::string> on_source_sql, on_target_sql;
  for (const auto& t : ctx_.tables) {
    auto select = "SELECT " + server_digest_select(t, server_digest_for(t, numerics)) + " FROM (SELECT " + column_list(t.columns) +
                  " FROM " + t.quoted + " WHERE ";
    on_source_sql.push_back(select + filter(src, t, b.range) + ") " + shardio::row_alias);
    on_target_sql.push_back(select + filter(*target_, t, b.range) + ") " + shardio::row_alias);
  }
  // On an error on this thread, the future's destructor waits for the source's reads to end.
  auto on_source = std::async(std::launch::async, [&] { return digest_on(src, on_source_sql); });
  auto on_target = digest_on(*target_, on_target_sql);
  auto source_digests = on_source.get();
  nlohmann::json verified = nlohmann::json::object();
  const auto& from = shard(b.source_id);
  for (std::size_t i = 0; i < ctx_.tables.size(); ++i) {
    const auto& t = ctx_.tables[i];
    if (source_digests[i] != on_target[i])
      verification_failed(b, t, source_digests[i], on_target[i],
                          "nothing was deleted and the map still routes the batch to " + from.name +
                              "; compare the batch's rows on both shards, then `shardctl op resume " + ctx_.op_id + "`");
    // The purge holds its deletes to this digest, computed again over the rows it deletes.
    verified[t.name] = source_digests[i];
  }
  faults_.point("verify", context(b));
  return verified.dump();
}

}  // namespace shardctl::migrate
