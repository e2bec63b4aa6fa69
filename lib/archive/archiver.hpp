// Archive runs as the `archive` family and `op resume|cancel` drive them: start a run of a job
// (or continue the job's unfinished one), preview it (--dry-run), resume or cancel a run by id,
// and report runs and jobs. The per-shard batch protocol is in shard_worker.cpp.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "archive/job.hpp"
#include "archive/run_journal.hpp"
#include "pg/connection.hpp"
#include "journal/journal.hpp"

namespace shardctl::archive {

struct RunOptions {
  int parallel = 4;  // shards archived at once
  // Override the job's own settings when given on the command line.
  std::optional<std::chrono::milliseconds> max_runtime, sleep, max_lag;
  std::function<void(const std::string& shard, std::int64_t rows)> on_batch;  // after each batch
  std::function<void(const std::string& line)> on_note;                       // operator notes
  std::function<void(const std::string& line)> on_warning;                    // rows a run leaves behind
};

// What `archive run --dry-run` shows per shard.
struct ShardPreview {
  std::string shard;
  std::vector<std::pair<std::string, std::int64_t>> rows;  // table -> rows, root first
  std::int64_t refused = 0;  // root rows kept because rows still reference them (no --cascade)
  std::optional<KeyValues> first_key, last_key;
};

struct Preview {
  Job job;
  std::optional<std::string> continues;  // the unfinished run a real run would continue
  std::vector<ShardPreview> shards;
  std::vector<std::string> skipped;  // shards not online, with why
  std::vector<std::string> notes;    // rows a run would leave behind (xrefs across shards)
};

struct RunReport {
  journal::OpStatus op;
  Job job;
  std::vector<ShardRunState> shards;
};

nlohmann::json to_json(const Preview& p);
// "1,abc" for a key; "-" for none.
std::string keys_text(const std::optional<KeyValues>& k);
std::int64_t total_rows(const nlohmann::json& rows_by_table);
// The run, its job and a table of shards with batches, rows, refused rows and cursor.
void print_run(std::ostream& out, const RunReport& r);
nlohmann::json to_json(const RunReport& r);

class Archiver {
 public:
  Archiver(pg::Connection& catalog, std::string catalog_dsn);
  ~Archiver();
  Archiver(const Archiver&) = delete;
  Archiver& operator=(const Archiver&) = delete;

  // Validates everything a run needs (predicate, primary key, destination) and counts.
  Preview preview(const Job& job);
  // Runs the job: continues its unfinished run when the definition matches, else starts one.
  // 75 at once while another process runs the job.
  RunReport run(const Job& job, const RunOptions& options);
  // `op resume` / `op cancel` of an archive run (cancel: stop before the next batch).
  RunReport resume(const std::string& run_id, const RunOptions& options);
  RunReport report(const std::string& run_id);
  // The runs of job `name`, newest first.
  std::vector<journal::OpStatus> runs_of(const std::string& name);

 private:
  void lock_job(const std::string& name);
  // `checked`: run() has just checked every shard (else execute checks those left first).
  RunReport execute(const std::string& run_id, const RunOptions& options, bool checked);

  pg::Connection& catalog_;
  std::string catalog_dsn_;
  std::vector<std::string> locked_jobs_;
};

// The operation kind archive runs are journaled as.
inline constexpr journal::OperationKind run_kind = journal::OperationKind::archive;

}  // namespace shardctl::archive
