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

// "(block,offset)" -> block.
std::int64_t block_of(const std::string& tid) { return std::stoll(tid.substr(1, tid.find(',') - 1)); }

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
  first_block_ = last_block_ = std::stoll(r.back().at(0).at(0));
  block_size_ = std::stoll(r.back().at(0).at(1));
  after_ = "ctid >= '(" + std::to_string(first_block_) + ",0)'::tid";
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

void LoadDigest::read_blocks() {
  auto r = target_.query("SELECT " + digest_ + ", max(ctid)::text FROM " + table_ + " WHERE " + after_ + " AND " + range_);
  sum_ = shardio::add_value_digests(sum_, r.at(0).at(0));
  const std::string& last = r.at(0).at(1);
  if (!last.empty()) {  // NULL: no row of the batch in those blocks yet
    after_ = "ctid > '" + last + "'::tid";
    last_block_ = std::max(last_block_, block_of(last));
  }
  ++parts_;
}

void LoadDigest::part_loaded() {
  stream_bytes_ += part_stream_bytes_;
  part_stream_bytes_ = 0;
  if (by_blocks_) read_blocks();
}

std::string LoadDigest::finish(const std::string& expected) {
  stream_bytes_ += part_stream_bytes_;
  part_stream_bytes_ = 0;
  if (by_blocks_) {
    read_blocks();
    if (sum_ == expected) return sum_;
  }
  whole_ = true;
  auto r = target_.query_each(std::string(whole_range_settings) + "SELECT " + digest_ + " FROM " + table_ + " WHERE " + range_);
  return r.back().at(0).at(0);
}

}  // namespace shardctl::migrate
