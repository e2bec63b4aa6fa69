// The manifest of a directory archive run: what each file holds (shard, table, batch, rows,
// SHA-256) and what is needed to load it anywhere (each table's DDL, the server encoding).
// It is rewritten atomically after every batch, so it always describes exactly the files that
// are whole. A manifest that does not parse or was edited into nonsense is a data Error (65).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardctl::archive {

inline constexpr const char* manifest_format = "shardctl-archive/1";
inline constexpr const char* manifest_name = "manifest.json";

struct ManifestFile {
  std::string path;  // relative to the run directory
  std::string shard;
  std::string table;  // display form
  std::int64_t batch = 0;
  std::int64_t rows = 0;
  std::uint64_t raw_bytes = 0;
  std::uint64_t bytes = 0;
  std::string sha256;
  bool restored = false;  // set by `archive restore` once the shard committed the rows
};

struct Manifest {
  std::string run;  // operation id
  std::string job;
  std::string root_table;
  std::string predicate;
  std::string server_encoding;
  std::map<std::string, std::string> ddl;  // table -> CREATE TABLE
  std::vector<ManifestFile> files;
};

nlohmann::json to_json(const Manifest& m);
// Throws a data Error naming `origin` when the document is not a valid manifest.
Manifest manifest_from_json(const nlohmann::json& doc, const std::string& origin);

void write_manifest(const std::filesystem::path& run_dir, const Manifest& m);
// Reads run_dir/manifest.json (data Error when missing, unparsable or invalid).
Manifest read_manifest(const std::filesystem::path& run_dir);

}  // namespace shardctl::archive
