#include "archive/manifest.hpp"

#include <fstream>

#include "archive/zstd_file.hpp"
#include "core/error.hpp"

namespace shardctl::archive {
namespace fs = std::filesystem;

namespace {

// A file path from a manifest must stay inside the run directory.
bool safe_relative(const std::string& p) {
  if (p.empty() || p.front() == '/') return false;
  for (const auto& part : fs::path(p))
    if (part == "..") return false;
  return true;
}

template <typename T>
T field(const nlohmann::json& obj, const char* key, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) throw data_error(where + ": missing \"" + key + "\"");
  try {
    return obj.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw data_error(where + ": \"" + key + "\" has the wrong type");
  }
}

}  // namespace

nlohmann::json to_json(const Manifest& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : m.files)
    files.push_back({{"path", f.path}, {"shard", f.shard}, {"table", f.table}, {"batch", f.batch}, {"rows", f.rows},
                     {"raw_bytes", f.raw_bytes}, {"bytes", f.bytes}, {"sha256", f.sha256}, {"restored", f.restored}});
  return {{"format", manifest_format}, {"run", m.run},         {"job", m.job},
          {"root_table", m.root_table}, {"predicate", m.predicate}, {"server_encoding", m.server_encoding},
          {"ddl", m.ddl},             {"files", files}};
}

Manifest manifest_from_json(const nlohmann::json& doc, const std::string& origin) {
  if (field<std::string>(doc, "format", origin) != manifest_format)
    throw data_error(origin + ": not a " + std::string(manifest_format) + " manifest");
  Manifest m;
  m.run = field<std::string>(doc, "run", origin);
  m.job = field<std::string>(doc, "job", origin);
  m.root_table = field<std::string>(doc, "root_table", origin);
  m.predicate = field<std::string>(doc, "predicate", origin);
  m.server_encoding = field<std::string>(doc, "server_encoding", origin);
  m.ddl = field<std::map<std::string, std::string>>(doc, "ddl", origin);
  auto files = doc.at("files");
  if (!files.is_array()) throw data_error(origin + ": \"files\" must be an array");
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::string where = origin + ": files[" + std::to_string(i) + "]";
    ManifestFile f;
    f.path = field<std::string>(files[i], "path", where);
    f.shard = field<std::string>(files[i], "shard", where);
    f.table = field<std::string>(files[i], "table", where);
    f.batch = field<std::int64_t>(files[i], "batch", where);
    f.rows = field<std::int64_t>(files[i], "rows", where);
    f.raw_bytes = field<std::uint64_t>(files[i], "raw_bytes", where);
    f.bytes = field<std::uint64_t>(files[i], "bytes", where);
    f.sha256 = field<std::string>(files[i], "sha256", where);
    f.restored = files[i].value("restored", false);
    if (!safe_relative(f.path)) throw data_error(where + ": path \"" + f.path + "\" leaves the run directory");
    if (f.sha256.size() != 64 || f.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw data_error(where + ": \"sha256\" is not a SHA-256 digest");
    if (f.rows < 0 || f.batch < 1) throw data_error(where + ": impossible rows or batch");
    if (!m.ddl.count(f.table)) throw data_error(where + ": table " + f.table + " has no DDL in the manifest");
    m.files.push_back(std::move(f));
  }
  return m;
}

void write_manifest(const fs::path& run_dir, const Manifest& m) {
  write_file_atomically(run_dir / manifest_name, to_json(m).dump(2) + "\n");
}

Manifest read_manifest(const fs::path& run_dir) {
  fs::path p = run_dir / manifest_name;
  std::ifstream in(p, std::ios::binary);
  if (!in) throw data_error("no archive manifest at " + p.string());
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) throw data_error(p.string() + " is not valid JSON");
  return manifest_from_json(doc, p.string());
}

}  // namespace shardctl::archive
