// Runner's verify at an online batch's cut-over (runner_online.cpp). Writers of the batch's
// keys wait through it, so it must be short: each server digests the batch's rows of every
// table in one aggregate (server_digest.hpp), the source's on a second thread while the
// target's run on this one. No row crosses the network and the two scans overlap, where the
// offline verify streams the source's rows to shardctl (it has the copy's digest for free; an
// online batch's rows changed since its copy).
#include <future>

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
