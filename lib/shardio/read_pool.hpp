// Running several reads of one database at once, each over its own connection: COPY streams
// digested as they arrive (CopyDigest), or queries of one value (a server-side digest). A
// migration's verify reads a batch on the target this way: one task per table, or per part of
// a table's key range, so it takes the time of its longest part instead of the sum of all.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "shardio/copy_digest.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::shardio {

struct ReadTask {
  std::string sql;     // COPY (...) TO STDOUT, binary or text as `binary` says; or a query (`value`)
  bool value = false;  // a query whose one row's first column is the result
  bool binary = true;
  std::int64_t weight = 0;  // expected rows: the heaviest tasks start first
};

struct ReadResult {
  std::optional<CopyDigest> digest;  // of a COPY stream, complete
  std::string value;                 // of a query
};

// What a session that reads for verify sets first: no parallel workers and no JIT (the reasons
// are at ReadPool's constructor).
inline constexpr const char* reader_session = "SET max_parallel_workers_per_gather = 0; SET jit = off";

// One task on one connection: what each of the pool's readers does, and what a caller with a
// single connection of its own does instead of a pool.
ReadResult read_one(RawConn& conn, const ReadTask& task);

class ReadPool {
 public:
  // Up to `size` connections, opened from `dsn` on first use (each runs `session_sql` once) and
  // kept. They do not use the server's parallel workers (the pool is the parallelism, and
  // starting two workers per read cost more than the read on a small machine), nor JIT: a
  // digest of a wide table's batch can pass jit_above_cost, and compiling it costs more than
  // the few expressions it would speed up, again at every batch.
  ReadPool(std::string dsn, std::string role, std::string session_sql, int size);
  ~ReadPool();
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;

  // Runs every task and returns their results in task order. The first error of any reader is
  // rethrown once all have stopped; a reader that failed is closed and opened again next time.
  std::vector<ReadResult> run(const std::vector<ReadTask>& tasks);

 private:
  RawConn& reader(std::size_t i);

  std::string dsn_, role_, session_sql_;
  std::size_t size_;
  std::vector<std::unique_ptr<RawConn>> readers_;
};

}  // namespace shardctl::shardio
