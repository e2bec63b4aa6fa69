#include "schema/files.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "digest/sha256.hpp"
#include "schema/statements.hpp"

namespace shardctl::schema {
namespace fs = std::filesystem;

std::string Version::text() const {
  if (parts.empty()) return "0";
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(parts[i]);
  }
  return out;
}

std::optional<Version> parse_version(std::string_view text) {
  Version v;
  std::size_t start = 0;
  while (true) {
    auto dot = text.find('.', start);
    auto part = text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 18) return std::nullopt;
    unsigned long long n = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<unsigned long long>(c - '0');
    }
    v.parts.push_back(n);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  while (!v.parts.empty() && v.parts.back() == 0) v.parts.pop_back();
  return v;
}

const char* kind_name(Kind k) noexcept { return k == Kind::versioned ? "versioned" : "repeatable"; }

std::optional<ParsedName> parse_file_name(std::string_view name) {
  constexpr std::string_view ext = ".sql";
  if (name.size() <= ext.size() || name.substr(name.size() - ext.size()) != ext) return std::nullopt;
  auto stem = name.substr(0, name.size() - ext.size());
  auto sep = stem.find("__");
  if (sep == std::string_view::npos || sep + 2 >= stem.size()) return std::nullopt;
  auto head = stem.substr(0, sep);
  ParsedName out;
  out.description = std::string(stem.substr(sep + 2));
  if (head == "R") {
    out.kind = Kind::repeatable;
    return out;
  }
  if (head.size() < 2 || head[0] != 'V') return std::nullopt;
  out.version = parse_version(head.substr(1));
  if (!out.version) return std::nullopt;
  out.kind = Kind::versioned;
  return out;
}

std::string normalize_line_endings(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') {
      out += '\n';
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string checksum_of(std::string_view normalized_text) {
  digest::Sha256 h;
  h.update(normalized_text);
  return "sha256:" + h.hex_digest();
}

bool no_transaction_header(std::string_view text, const std::string& file) {
  constexpr std::string_view directive = "-- shardctl:";
  bool no_tx = false;
  std::size_t pos = 0;
  int line = 0;
  // A UTF-8 byte order mark some editors write is not part of the first line's text.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;
  while (pos < text.size()) {
    ++line;
    auto nl = text.find('\n', pos);
    auto raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    auto b = raw.find_first_not_of(" \t");
    if (b == std::string_view::npos) continue;  // blank line
    auto e = raw.find_last_not_of(" \t");
    auto l = raw.substr(b, e - b + 1);
    if (l.substr(0, 2) != "--") break;  // the header ends at the first line that is not a comment
    if (l.substr(0, directive.size()) != directive) continue;
    auto name = l.substr(directive.size());
    if (name == "no-transaction") {
      no_tx = true;
      continue;
    }
    throw data_error(file + ":" + std::to_string(line) + ":" + std::to_string(b + 1) + ": unknown directive '" +
                         std::string(l) + "'",
                     "the only directive is `-- shardctl:no-transaction`");
  }
  return no_tx;
}

Migration load_file(const fs::path& path) {
  std::string file = path.filename().string();
  auto parsed = parse_file_name(file);
  if (!parsed)
    throw data_error(path.string() + ": not a migration file name",
                     "name migrations V<version>__<name>.sql (e.g. V3__add_email.sql) or R__<name>.sql");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw data_error(path.string() + ": cannot be read");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw data_error(path.string() + ": cannot be read");
  Migration m;
  m.kind = parsed->kind;
  m.version = parsed->version;
  m.description = parsed->description;
  m.file = file;
  m.sql = normalize_line_endings(buf.str());
  m.checksum = checksum_of(m.sql);
  m.no_transaction = no_transaction_header(m.sql, path.string());
  if (split_statements(m.sql).empty())
    throw data_error(path.string() + ": holds no SQL statement", "an empty migration is most likely a mistake");
  return m;
}

std::vector<Migration> load_directory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) throw usage_error("migration directory " + dir.string() + " does not exist");
  if (!fs::is_directory(dir, ec)) throw usage_error(dir.string() + " is not a directory", "give the directory holding the V*__*.sql files");
  std::vector<fs::path> paths;
  fs::directory_iterator it(dir, ec);
  if (ec) throw usage_error("cannot read the directory " + dir.string() + ": " + ec.message());
  for (const auto& entry : it) {
    auto name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    if (name.size() < 4 || name.substr(name.size() - 4) != ".sql") continue;
    if (!entry.is_regular_file(ec)) continue;
    paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Migration> versioned, repeatable;
  std::map<Version, std::string> by_version;
  for (const auto& p : paths) {
    auto m = load_file(p);
    if (m.kind == Kind::versioned) {
      auto [it2, fresh] = by_version.emplace(*m.version, m.file);
      if (!fresh)
        throw data_error((dir / m.file).string() + ": version " + m.version->text() + " is also the version of " +
                             it2->second,
                         "every versioned file needs its own version");
      versioned.push_back(std::move(m));
    } else {
      repeatable.push_back(std::move(m));
    }
  }
  // Sorted through the version map (not by moving Migrations around: g++ 12 -O3 then warns
  // falsely about an uninitialized optional).
  std::map<Version, std::size_t> order;
  for (std::size_t i = 0; i < versioned.size(); ++i) order.emplace(*versioned[i].version, i);
  std::vector<Migration> out;
  out.reserve(versioned.size() + repeatable.size());
  for (const auto& [v, i] : order) out.push_back(std::move(versioned[i]));
  // Repeatable files follow; paths were sorted, so they already are in file-name order.
  for (auto& m : repeatable) out.push_back(std::move(m));
  return out;
}

std::pair<int, int> line_col(std::string_view text, std::size_t offset) {
  int line = 1, col = 1;
  for (std::size_t i = 0; i < text.size() && i < offset; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      col = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++col;  // count characters, not UTF-8 continuation bytes
    }
  }
  return {line, col};
}

std::size_t byte_offset_of_char(std::string_view text, std::size_t pos) {
  if (pos == 0) return 0;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++chars;
      if (chars == pos) return i;
    }
  }
  return text.size();
}

}  // namespace shardctl::schema
