#include "schema/files.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/utf8.hpp"
#include "core/words.hpp"
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

namespace {

constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";

const char* type_name(fs::file_type t) {
  switch (t) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block: return "a block device";
    case fs::file_type::character: return "a character device";
    default: return "not a regular file";
  }
}

constexpr const char* name_hint =
    "a name like a migration's (*.sql, V<digit>..., R_...) must be a migration file: rename or move it, or start its "
    "name with '.' to have it ignored";

// The regular file `path` (an entry of `dir`) is, following a symbolic link that stays inside
// `dir`. Refuses anything else before it is opened: opening a FIFO would wait for a writer.
fs::path regular_file_of(const fs::path& dir, const fs::path& path, const std::string& shown) {
  std::error_code ec;
  auto st = fs::symlink_status(path, ec);
  if (ec) throw data_error(shown + ": cannot be read: " + ec.message());
  fs::path target = path;
  if (fs::is_symlink(st)) {
    auto link = fs::read_symlink(path, ec);
    std::string to = printable(link.string());
    auto resolved = fs::canonical(path, ec);
    if (ec)
      throw data_error(shown + ": a symbolic link to '" + to + "', which does not exist",
                       "the link is broken; a migration is never skipped: restore its target or remove the link");
    auto base = fs::canonical(dir, ec);
    if (ec) throw data_error(shown + ": cannot resolve the directory: " + ec.message());
    auto rel = resolved.lexically_relative(base);
    if (rel.empty() || *rel.begin() == "..")
      throw data_error(shown + ": a symbolic link to '" + printable(resolved.string()) + "', outside the migration directory",
                       "a symbolic link must lead to a regular file inside the migration directory; copy the file in");
    st = fs::status(resolved, ec);
    if (ec) throw data_error(shown + ": cannot be read: " + ec.message());
    target = resolved;
  }
  if (!fs::is_regular_file(st))
    throw data_error(shown + ": " + type_name(st.type()) + ", not a migration file", name_hint);
  return target;
}

// The bytes of the regular file `path`, refused (65) if a FIFO or device was put in its place
// since it was checked. The server takes a statement of at most 1 GB: no migration file is larger.
std::string read_regular_file(const fs::path& path, const std::string& shown) {
  InputFileRules rules("migration file", std::uintmax_t{1} << 30, ErrorKind::data, name_hint);
  rules.no_follow = true;  // regular_file_of resolved the link
  rules.shown = shown;
  return read_input_file(path, rules);
}

}  // namespace

bool looks_like_migration(std::string_view name) {
  if (name.empty() || name[0] == '.') return false;
  if (name.size() >= 4) {
    auto ext = name.substr(name.size() - 4);
    if (ext[0] == '.' && (ext[1] == 's' || ext[1] == 'S') && (ext[2] == 'q' || ext[2] == 'Q') && (ext[3] == 'l' || ext[3] == 'L'))
      return true;
  }
  if (name.size() < 2) return false;
  char c0 = name[0], c1 = name[1];
  if ((c0 == 'V' || c0 == 'v') && (std::isdigit(static_cast<unsigned char>(c1)) || c1 == '_')) return true;
  return (c0 == 'R' || c0 == 'r') && c1 == '_';
}

std::string migration_text(std::string_view bytes, const std::string& file) {
  // Editors on Windows write a byte order mark: it is not SQL (the server would take it for
  // part of the first word).
  if (bytes.substr(0, byte_order_mark.size()) == byte_order_mark) bytes.remove_prefix(byte_order_mark.size());
  std::string text = normalize_line_endings(bytes);
  auto where = [&](std::size_t offset) {
    auto [line, col] = line_col(text, offset);
    return file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
  };
  if (auto nul = text.find('\0'); nul != std::string::npos)
    throw data_error(where(nul) + "a NUL byte; a migration file is text",
                     "the server would receive only the text before it: remove it (or save the file as UTF-8, not UTF-16)");
  for (std::size_t i = 0; i < text.size();) {
    auto n = utf8_detail::sequence_length(text, i);
    if (n == 0) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[i]));
      throw data_error(where(i) + "not valid UTF-8 (byte " + byte + ")", "save the file as UTF-8");
    }
    i += n;
  }
  return text;
}

void refuse_transaction_control(const std::vector<Statement>& statements, std::string_view text, const std::string& file) {
  for (const auto& st : statements) {
    auto tc = transaction_control(st);
    if (!tc) continue;
    auto [line, col] = line_col(text, st.offset);
    throw data_error(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + *tc +
                         ": a migration file must not control transactions",
                     "shardctl runs each file in a transaction of its own, recorded with it (a no-transaction file "
                     "commits each statement by itself): remove it, and put what must commit first in a file of its own");
  }
}

Migration load_file(const fs::path& dir, const std::string& name) {
  fs::path path = dir / name;
  std::string shown = printable(path.string());
  // The name goes into every shard's history (text) and into reports: UTF-8, no control characters.
  if (!valid_utf8(name)) throw data_error(shown + ": the file name is not valid UTF-8", "rename the file");
  for (char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
      throw data_error(shown + ": the file name holds a control character", "rename the file");
  auto parsed = parse_file_name(name);
  if (!parsed)
    throw data_error(shown + ": not a migration file name",
                     "name migrations V<version>__<name>.sql (e.g. V3__add_email.sql) or R__<name>.sql");
  auto bytes = read_regular_file(regular_file_of(dir, path, shown), shown);
  Migration m;
  m.kind = parsed->kind;
  m.version = parsed->version;
  m.description = parsed->description;
  m.file = name;
  m.sql = migration_text(bytes, shown);
  m.checksum = checksum_of(m.sql);
  if (std::string_view(bytes).substr(0, byte_order_mark.size()) == byte_order_mark)
    m.checksum_with_bom = checksum_of(std::string(byte_order_mark) + m.sql);
  m.no_transaction = no_transaction_header(m.sql, shown);
  auto statements = split_statements(m.sql);
  if (statements.empty()) throw data_error(shown + ": holds no SQL statement", "an empty migration is most likely a mistake");
  refuse_transaction_control(statements, m.sql, shown);
  return m;
}

std::vector<Migration> load_directory(const fs::path& dir) {
  std::error_code ec;
  std::string shown_dir = printable(dir.string());
  if (!fs::exists(dir, ec)) throw usage_error("migration directory " + shown_dir + " does not exist");
  if (!fs::is_directory(dir, ec)) throw usage_error(shown_dir + " is not a directory", "give the directory holding the V*__*.sql files");
  std::vector<std::string> names;
  fs::directory_iterator it(dir, ec);
  if (ec) throw usage_error("cannot read the directory " + shown_dir + ": " + ec.message());
  for (const auto& entry : it) {
    auto name = entry.path().filename().string();
    // Every entry meant as a migration is loaded, so one that is not valid is refused: a typo,
    // a broken link or a directory never skips a migration silently.
    if (looks_like_migration(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::vector<Migration> versioned, repeatable;
  std::map<Version, std::string> by_version;
  for (const auto& name : names) {
    auto m = load_file(dir, name);
    if (m.kind == Kind::versioned) {
      auto [it2, fresh] = by_version.emplace(*m.version, m.file);
      if (!fresh)
        throw data_error(printable((dir / m.file).string()) + ": version " + m.version->text() + " is also the version of " +
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
  // Repeatable files follow; names were sorted, so they already are in file-name order.
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
