// One shard's part of an archive run: batch after batch, select the rows in key order, deliver
// them, verify, commit at the destination, delete exactly the verified rows at the source, and
// journal (shardctl-archive(1); the steps are in shard_worker.cpp). Runs in its own thread with
// its own connections.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "archive/delivery.hpp"
#include "archive/job.hpp"
#include "archive/run_journal.hpp"
#include "archive/xref_children.hpp"
#include "catalog/catalog.hpp"
#include "fault/fault.hpp"

namespace shardctl::archive {

// Why workers stop before the run is complete.
enum class StopReason { none, cancelled, max_runtime, failed };

// What the workers of one run share. Everything here is safe to use from several threads.
struct RunShared {
  std::string run;
  std::int64_t token = 0;  // fencing token of this process (journal/journal.hpp)
  Job job;
  nlohmann::json tables;  // the tables the run started with (ArchiveSet::describe())
  XrefChildren xrefs;     // the catalog's xrefs, read when the run (re)started
  std::string catalog_dsn;
  std::optional<std::chrono::steady_clock::time_point> deadline;  // --max-runtime
  std::atomic<StopReason> stop{StopReason::none};                 // the first reason given wins
  SharedManifest* manifest = nullptr;
  std::mutex mu;  // guards what follows
  fault::FaultInjector fault;
  std::function<void(const std::string& shard, std::int64_t rows)> on_batch;  // progress
  std::function<void(const std::string& line)> on_note;                       // "waiting for replica lag"

  // A fault point (fault/fault.hpp) of a shard's batch: context "SHARD/bN".
  void point(std::string_view step, const std::string& shard, int batch_no) {
    std::lock_guard lock(mu);
    std::string context = shard;
    fault.point(step, context.append("/b").append(std::to_string(batch_no)));
  }
  void request_stop(StopReason r) {
    StopReason none = StopReason::none;
    stop.compare_exchange_strong(none, r);
  }
  bool stopping() const { return stop.load() != StopReason::none; }
};

// Archives the shard's remaining batches of the run (resuming one in flight). Returns when the
// shard is done or the run is asked to stop.
void archive_shard(RunShared& run, const catalog::Shard& shard, std::int64_t shard_id);

}  // namespace shardctl::archive
