#include "shardside/receipts.hpp"

#include "shardside/sql.hpp"

namespace shardctl::shardside {

void ensure_archive_receipts(shardio::RawConn& shard) { shard.script(std::string(sql::archive_receipts)); }

std::optional<ArchiveReceipt> archive_receipt(shardio::RawConn& shard, const std::string& run, int batch_no) {
  auto r = shard.query("SELECT tables::text, refused FROM shardctl.archive_receipts WHERE op_id = $1 AND batch_no = $2",
                       {run, std::to_string(batch_no)});
  if (r.empty()) return std::nullopt;
  return ArchiveReceipt{r[0][0], std::stoll(r[0][1])};
}

void insert_archive_receipt(shardio::RawConn& shard, const std::string& run, int batch_no, const ArchiveReceipt& receipt) {
  shard.query("INSERT INTO shardctl.archive_receipts (op_id, batch_no, tables, refused) VALUES ($1, $2, $3::jsonb, $4)",
              {run, std::to_string(batch_no), receipt.tables, std::to_string(receipt.refused)});
}

void drop_archive_receipts(shardio::RawConn& shard, const std::string& run) {
  if (shard.query("SELECT to_regclass('shardctl.archive_receipts') IS NOT NULL")[0][0] == "t")
    shard.query("DELETE FROM shardctl.archive_receipts WHERE op_id = $1", {run});
}

}  // namespace shardctl::shardside
