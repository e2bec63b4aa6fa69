#include "shardio/copy_ahead.hpp"

#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <optional>

namespace shardctl::shardio {
namespace {

// Messages are gathered into blocks of about this size: one hand-over per block, not per row.
constexpr std::size_t block_bytes = std::size_t{256} << 10;

// Thrown into the reader's sink once the consumer has given up.
struct Abandoned {};

// The blocks read and not yet consumed, between the two threads.
class BlockQueue {
 public:
  explicit BlockQueue(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // Reader: waits for room (one block always fits). Throws Abandoned once the consumer left.
  void push(std::string block) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return abandoned_ || blocks_.empty() || bytes_ + block.size() <= max_bytes_; });
    if (abandoned_) throw Abandoned{};
    bytes_ += block.size();
    blocks_.push_back(std::move(block));
    ready_.notify_one();
  }
  // Reader: no more blocks; `error` is what stopped it, if anything did.
  void close(std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    closed_ = true;
    error_ = std::move(error);
    ready_.notify_one();
  }
  // Consumer: the next block, or none at the end. Rethrows the reader's error after the blocks
  // read before it.
  std::optional<std::string> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !blocks_.empty() || closed_; });
    if (blocks_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return std::nullopt;
    }
    std::string block = std::move(blocks_.front());
    blocks_.pop_front();
    bytes_ -= block.size();
    room_.notify_one();
    return block;
  }
  // Consumer: gone; a waiting or later push throws Abandoned.
  void abandon() {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
    room_.notify_one();
  }

 private:
  std::mutex mutex_;
  std::condition_variable room_, ready_;
  std::deque<std::string> blocks_;
  std::size_t bytes_ = 0;
  const std::size_t max_bytes_;
  bool closed_ = false, abandoned_ = false;
  std::exception_ptr error_;
};

}  // namespace

std::uint64_t copy_out_ahead(RawConn& from, const std::string& copy_out_sql,
                             const std::function<void(std::string_view)>& sink, std::size_t max_ahead_bytes) {
  BlockQueue queue(max_ahead_bytes);
  std::uint64_t bytes = 0;
  auto reader = std::async(std::launch::async, [&] {
    try {
      std::string block;
      block.reserve(block_bytes + 1024);
      bytes = copy_out_to(from, copy_out_sql, [&](std::string_view message) {
        block.append(message);
        if (block.size() < block_bytes) return;
        queue.push(std::move(block));
        block = std::string();
        block.reserve(block_bytes + 1024);
      });
      if (!block.empty()) queue.push(std::move(block));
      queue.close(nullptr);
    } catch (const Abandoned&) {
      queue.close(nullptr);  // the consumer's error is the one to report
    } catch (...) {
      queue.close(std::current_exception());
    }
  });
  try {
    while (auto block = queue.pop()) sink(*block);
  } catch (...) {
    queue.abandon();
    reader.wait();
    throw;
  }
  reader.get();
  return bytes;
}

}  // namespace shardctl::shardio
