// The one thread pool every fan-out shares (fanout::run, check's shard sweeps, archive's
// shards, shardio's read pool): simple enough to read in one go, so that each caller's own
// code says only what one task does.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace shardctl {

// Runs task(i) for every i in [0, count), at most `parallel` at once, starting them in index
// order. The calling thread is one of the workers, so one at a time starts no thread and its
// errors and sanitizer reports stay on the main thread. A task that throws stops no other
// task; once all have finished, the exception of the lowest index is rethrown. Tasks that
// must stop the others share a flag and return early when it is set.
template <class Task>
void parallel_for(std::size_t count, int parallel, Task&& task) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < count;) try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
  };
  std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(std::max(parallel, 1)), count);
  {
    std::vector<std::jthread> threads;
    for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(worker);
    worker();
  }  // joined
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace shardctl
