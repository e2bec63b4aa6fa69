#include "archive/job.hpp"

#include "catalog/names.hpp"
#include "core/error.hpp"

namespace shardctl::archive {
namespace {

std::string destination_text(const Destination& d) { return d.kind == Destination::Kind::dir ? "dir:" + d.path : "postgres:" + d.dsn; }

nlohmann::json millis(const std::optional<std::chrono::milliseconds>& d) {
  return d ? nlohmann::json(d->count()) : nlohmann::json(nullptr);
}

std::optional<std::chrono::milliseconds> millis_from(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key) || doc[key].is_null()) return std::nullopt;
  return std::chrono::milliseconds(doc[key].get<std::int64_t>());
}

}  // namespace

bool Job::same_rows(const Job& other) const {
  return table == other.table && where == other.where && cascade == other.cascade &&
         destination_text(to) == destination_text(other.to);
}

Job job_from_config(const config::ArchiveJob& entry, std::int64_t default_batch) {
  Job job;
  job.name = entry.name;
  job.table = catalog::qualify_table(entry.table);
  job.where = entry.where;
  job.cascade = entry.cascade;
  job.to = parse_destination(entry.to);
  job.batch_size = entry.batch_size.value_or(default_batch);
  job.max_runtime = entry.max_runtime;
  job.sleep = entry.sleep;
  job.max_lag = entry.max_lag;
  return job;
}

std::string adhoc_job_name(const std::string& table) { return "table:" + table; }

nlohmann::json to_json(const Job& job) {
  return {{"job", job.name},
          {"table", job.table},
          {"where", job.where},
          {"cascade", job.cascade},
          // The destination as given: it holds no password (parse_destination refuses one).
          {"to", destination_text(job.to)},
          {"batch_size", job.batch_size},
          {"max_runtime_ms", millis(job.max_runtime)},
          {"sleep_ms", millis(job.sleep)},
          {"max_lag_ms", millis(job.max_lag)}};
}

Job job_from_json(const nlohmann::json& doc) {
  try {
    Job job;
    job.name = doc.at("job").get<std::string>();
    job.table = doc.at("table").get<std::string>();
    job.where = doc.at("where").get<std::string>();
    job.cascade = doc.at("cascade").get<bool>();
    job.to = parse_destination(doc.at("to").get<std::string>());
    job.batch_size = doc.at("batch_size").get<std::int64_t>();
    job.max_runtime = millis_from(doc, "max_runtime_ms");
    job.sleep = millis_from(doc, "sleep_ms");
    job.max_lag = millis_from(doc, "max_lag_ms");
    return job;
  } catch (const nlohmann::json::exception& e) {
    throw data_error(std::string("the journal of an archive run is not an archive job: ") + e.what());
  }
}

}  // namespace shardctl::archive
