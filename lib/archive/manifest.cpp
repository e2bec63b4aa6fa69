#include "archive/manifest.hpp"

#include <limits>
#include <type_traits>

#include "archive/zstd_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/nesting.hpp"
#include "core/utf8.hpp"

namespace shardctl::archive {
namespace fs = std::filesystem;

namespace {

// A manifest lists every file of a run (about 300 bytes each) and is read whole: 256 MiB is
// some 900,000 files.
constexpr std::uintmax_t max_manifest_bytes = 256u << 20;

// A value as the manifest holds it, shortened for a message.
std::string shown_json(const nlohmann::json& v) {
  auto text = v.dump();
  return text.size() > 40 ? text.substr(0, 40) + "..." : text;
}

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
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // nlohmann would convert 1.5 to 1 and -1 to 2^64-1: a count must be written as one.
    const auto& v = obj.at(key);
    bool whole = v.is_number_integer() && (std::is_signed_v<T> ? !v.is_number_unsigned() || v.template get<std::uint64_t>() <=
                                                                     static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                                                               : v.is_number_unsigned());
    if (!whole)
      throw data_error(where + ": \"" + key + "\" must be a whole number" + (std::is_signed_v<T> ? "" : " >= 0") + ", not " +
                       shown_json(v));
  }
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
  if (!doc.contains("files") || !doc.at("files").is_array()) throw data_error(origin + ": \"files\" must be an array");
  const auto& files = doc.at("files");
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
    f.restored = files[i].contains("restored") && field<bool>(files[i], "restored", where);
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
  std::string shown = printable(p.string());
  std::string text = read_input_file(p, {"archive manifest", max_manifest_bytes, ErrorKind::data,
                                         "the manifest is written by `shardctl archive run` beside the run's files"});
  require_sound_json_text(text, shown, "the manifest was not written so by `shardctl archive run`; nothing was restored");
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) throw data_error(shown + " is not valid JSON");
  return manifest_from_json(doc, shown);
}

}  // namespace shardctl::archive
