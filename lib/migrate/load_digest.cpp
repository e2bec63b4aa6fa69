#include "migrate/load_digest.hpp"

#include <algorithm>

#include "shardio/value_digest.hpp"

namespace shardctl::migrate {

namespace {

// Planner settings for the reads by block: a TID range scan, never a plan over the key's index
// (the statistics of a table being loaded are stale). LOCAL: they end with the transaction.
constexpr const char* by_block_settings =
    "SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off; ";
// A key range read whole: a bitmap scan (each page read once), as verify reads after a commit.
constexpr const char* whole_range_settings =
    "SET LOCAL enable_bitmapscan = on; SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = on; ";

}  // namespace

LoadDigest::LoadDigest(shardio::RawConn& target, std::string digest, std::string table, std::string range, bool by_blocks,
                       std::uint64_t ring_bytes)
    : target_(target),
      digest_(std::move(digest)),
      table_(std::move(table)),
      range_(std::move(range)),
      by_blocks_(by_blocks),
      ring_bytes_(ring_bytes) {}

void LoadDigest::begin() {
  if (!by_blocks_) return;
  // The table's last block may have room left: the load's first rows can go there.
  auto r = target_.query_each(std::string(by_block_settings) + "SELECT greatest(pg_relation_size(" +
                              target_.literal(table_) + "::regclass) / current_setting('block_size')::int - 1, 0), " +
                              "current_setting('block_size')");
  first_block_ = last_block_ = next_block_ = std::stoll(r.back().at(0).at(0));
  block_size_ = std::stoll(r.back().at(0).at(1));
}

std::uint64_t LoadDigest::next_part_bytes() const noexcept {
  if (!by_blocks_) return UINT64_MAX;  // one statement: nothing is read between parts
  // Heap bytes per stream byte so far (1 before the first part: a COPY row and its heap tuple
  // are of a size for typical rows); half the ring of heap per part.
  double heap = static_cast<double>((last_block_ - first_block_ + 1) * block_size_);
  double ratio = stream_bytes_ > 0 ? std::max(heap / static_cast<double>(stream_bytes_), 0.25) : 1.0;
  double bytes = static_cast<double>(ring_bytes_) / 2.0 / ratio;
  return static_cast<std::uint64_t>(std::clamp(bytes, 256.0 * 1024, 256.0 * 1024 * 1024));
}

void LoadDigest::read_blocks(bool last) {
  std::string where = "ctid >= '(" + std::to_string(next_block_) + ",0)'::tid";
  std::int64_t end = 0;
  if (!last) {
    // Up to the table's last block, which the next part may still fill: read with it.
    std::int64_t blocks =
        std::stoll(target_.query("SELECT pg_relation_size(" + target_.literal(table_) + "::regclass) / " + std::to_string(block_size_))[0][0]);
    last_block_ = std::max(last_block_, blocks - 1);
    end = blocks - 1;
    if (end <= next_block_) return;  // no block complete yet
    where += " AND ctid < '(" + std::to_string(end) + ",0)'::tid";
  }
  auto r = target_.query("SELECT " + digest_ + " FROM " + table_ + " WHERE " + where + " AND " + range_);
  sum_ = shardio::add_value_digests(sum_, r.at(0).at(0));
  next_block_ = end;
  ++parts_;
}

void LoadDigest::part_loaded() {
  stream_bytes_ += part_stream_bytes_;
  part_stream_bytes_ = 0;
  if (by_blocks_) read_blocks(false);
}

std::string LoadDigest::finish(const std::string& expected) {
  stream_bytes_ += part_stream_bytes_;
  part_stream_bytes_ = 0;
  if (by_blocks_) {
    read_blocks(true);
    if (sum_ == expected) return sum_;
  }
  whole_ = true;
  auto r = target_.query_each(std::string(whole_range_settings) + "SELECT " + digest_ + " FROM " + table_ + " WHERE " + range_);
  return r.back().at(0).at(0);
}

}  // namespace shardctl::migrate
