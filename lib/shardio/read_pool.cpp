#include "shardio/read_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <numeric>
#include <optional>
#include <thread>

#include "core/parallel.hpp"

namespace shardctl::shardio {

ReadResult read_one(RawConn& conn, const ReadTask& task) {
  ReadResult out;
  if (task.value) {
    out.value = conn.query(task.sql).at(0).at(0);
    return out;
  }
  CopyDigest d(task.binary);
  copy_out_to(conn, task.sql, [&](std::string_view chunk) { d.add(chunk); });
  if (!d.complete()) throw internal_error("a COPY stream read back ended inside a row");
  out.digest = std::move(d);
  return out;
}

ReadPool::ReadPool(std::string dsn, std::string role, std::string session_sql, int size)
    : dsn_(std::move(dsn)),
      role_(std::move(role)),
      session_sql_(std::move(session_sql)),
      size_(static_cast<std::size_t>(std::max(size, 1))),
      readers_(size_) {}

ReadPool::~ReadPool() = default;

RawConn& ReadPool::reader(std::size_t i) {
  auto& conn = readers_[i];
  if (!conn) {
    conn = std::make_unique<RawConn>(dsn_, role_);
    conn->exec(reader_session);
    if (!session_sql_.empty()) conn->exec(session_sql_);
  }
  return *conn;
}

std::vector<ReadResult> ReadPool::run(const std::vector<ReadTask>& tasks) {
  std::vector<ReadResult> out(tasks.size());
  std::vector<std::size_t> order(tasks.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tasks[a].weight > tasks[b].weight; });
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::size_t workers = std::min(size_, std::max<std::size_t>(tasks.size(), 1));
  std::vector<std::exception_ptr> errors(workers);
  // Each worker owns one connection (opening it in its own thread, so connections start in
  // parallel too) and takes the next task until none is left or another worker failed.
  auto work = [&](std::size_t w) {
    try {
      RawConn& conn = reader(w);
      for (std::size_t k; !failed && (k = next++) < order.size();) out[order[k]] = read_one(conn, tasks[order[k]]);
    } catch (...) {
      errors[w] = std::current_exception();
      failed = true;
      readers_[w].reset();  // its state is unknown: open a fresh one next time
    }
  };
  parallel_for(workers, static_cast<int>(workers), work);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace shardctl::shardio
