// The target's value digest of one table's batch, read back inside the transaction that loads
// it, part by part, while each part's pages are still in shared buffers.
//
// The load runs as several COPY statements (shardio/copy_parts.hpp), each small enough for
// COPY's ring of shared buffers. After each part the digest reads the rows of the batch in the
// heap blocks the load has written since the last read: a TID range scan from where the table
// ended (the load appends), which needs no index and finds every page still in the ring. Each
// read ends before the table's last block, which the next part may still fill, and the next
// read starts there, so every block is read once: the reads need not track the last row they
// saw (max(ctid) cost a fifth of each read, bench/README.md, "moves on a scattered heap"). Rows
// the load put elsewhere (into free space of older pages, which PostgreSQL's free space map
// hands out) are not in those blocks: the parts' digest then differs from the source's, and
// the batch's whole key range is read back instead, as after a load in one statement. So a
// digest that matches covers every row the source sent; a range read decides otherwise.
//
// Own rows of an open transaction need no hint bits, and the reads cost the move no second
// connection. Partitioned and inherited tables (blocks per child) and servers before
// PostgreSQL 14 (no TID range scans) read the key range once, still inside the transaction.
#pragma once

#include <cstdint>
#include <string>

#include "shardio/raw_conn.hpp"

namespace shardctl::migrate {

class LoadDigest {
 public:
  // `digest`: the value digest's select expression (shardio::value_digest_sql); `table`: the
  // quoted table; `range`: the batch's key filter; `by_blocks`: whether parts are read by
  // block (a plain table on PostgreSQL 14+); `ring_bytes`: the size of COPY's buffer ring.
  LoadDigest(shardio::RawConn& target, std::string digest, std::string table, std::string range, bool by_blocks,
             std::uint64_t ring_bytes);

  // Before the first part: where the table ends.
  void begin();
  // Counts bytes of the stream the current part holds (to size the next one).
  void add_stream_bytes(std::size_t n) noexcept { part_stream_bytes_ += n; }
  // Bytes of stream the next part should hold: about half the ring of heap.
  std::uint64_t next_part_bytes() const noexcept;
  // Between parts: reads the blocks the last part wrote.
  void part_loaded();
  // After the last part: reads the rest and returns the target's "COUNT:SUM" of the batch. When
  // it differs from `expected` (the source stream's), the key range is read whole instead.
  std::string finish(const std::string& expected);

  int parts_read() const noexcept { return parts_; }
  bool read_whole() const noexcept { return whole_; }

 private:
  // The blocks from next_block_ on: up to the table's last block, or (`last`) to its end.
  void read_blocks(bool last);

  shardio::RawConn& target_;
  std::string digest_, table_, range_;
  bool by_blocks_;
  std::uint64_t ring_bytes_;
  std::string sum_ = "0:0";
  std::int64_t first_block_ = 0, last_block_ = 0, next_block_ = 0, block_size_ = 8192;
  std::uint64_t part_stream_bytes_ = 0, stream_bytes_ = 0;
  int parts_ = 0;
  bool whole_ = false;
};

}  // namespace shardctl::migrate
