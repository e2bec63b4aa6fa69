// An archive job: which rows a run archives (a root table, a predicate, whether FK children go
// with them) and where they go. It comes from `[[archive.job]]` in the config or from `archive
// run --table --where --to`; a run stores it in its journal row, so a resumed run archives
// exactly what it started with even when the config changed since.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "archive/destination.hpp"
#include "config/config.hpp"

namespace shardctl::archive {

struct Job {
  std::string name;
  std::string table;  // display form, schema-qualified (catalog::qualify_table)
  std::string where;
  bool cascade = false;
  Destination to;
  std::int64_t batch_size = 1000;  // root rows per batch
  std::optional<std::chrono::milliseconds> max_runtime, sleep, max_lag;

  // Whether `other` archives the same rows to the same place (what a run may be resumed as).
  bool same_rows(const Job& other) const;
};

// The job a config entry describes; `default_batch` is [defaults] batch_size. Usage Error (64)
// for a bad table name or destination.
Job job_from_config(const config::ArchiveJob& entry, std::int64_t default_batch);

// The name of an ad hoc job (`archive run --table T ...` without --name): "table:T".
std::string adhoc_job_name(const std::string& table);

nlohmann::json to_json(const Job& job);
// Reads a job back from an operation's args (data Error when it is not one).
Job job_from_json(const nlohmann::json& doc);

}  // namespace shardctl::archive
