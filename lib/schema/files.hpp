// Migration files of a directory: versioned `V<version>__<name>.sql` and repeatable
// `R__<name>.sql`, their checksums and their header directives. Pure: reads files, no database.
#pragma once

#include <compare>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/words.hpp"
#include "schema/statements.hpp"

namespace shardctl::schema {

// A version is dot-separated non-negative integers compared part by part as numbers:
// 2 < 10, 1.2 < 1.10, and 1 == 1.0 == 001 (trailing zero parts and leading zeros do not count).
struct Version {
  std::vector<unsigned long long> parts;  // trailing zeros removed; empty means 0
  std::string text() const;               // canonical: "1.2", "10", "0"
  auto operator<=>(const Version&) const = default;
};

// "1", "1.2", "007" -> Version; nullopt for anything else (empty part, sign, letters, > 18 digits).
std::optional<Version> parse_version(std::string_view text);

enum class Kind { versioned, repeatable };
inline constexpr auto kind_words =
    words<Kind>({{Kind::versioned, "versioned"}, {Kind::repeatable, "repeatable"}}).otherwise("repeatable");
constexpr const auto& words_of(Kind) noexcept { return kind_words; }
using shardctl::operator<<;
using shardctl::to_text;

struct Migration {
  Kind kind = Kind::versioned;
  std::optional<Version> version;  // versioned files only
  std::string description;         // the <name> part
  std::string file;                // file name, e.g. "V2__add_email.sql": how history names it
  std::string sql;                 // the file's text, a leading BOM removed, line endings normalized to LF
  std::string checksum;            // "sha256:<hex>" of `sql`
  // A file that starts with a UTF-8 byte order mark: the checksum earlier versions recorded
  // for it (the BOM included), which history rows written then may hold.
  std::optional<std::string> checksum_with_bom;
  bool no_transaction = false;     // header `-- shardctl:no-transaction`
  bool matches(const std::string& recorded) const { return recorded == checksum || recorded == checksum_with_bom; }
};

// What a file name says. nullopt: not a migration name at all (callers decide: a `.sql` file
// that is not one is a data error, anything else is ignored).
struct ParsedName {
  Kind kind;
  std::optional<Version> version;
  std::string description;
};
std::optional<ParsedName> parse_file_name(std::string_view name);

// CRLF and lone CR become LF, so a checkout on Windows has the same checksum.
std::string normalize_line_endings(std::string_view text);
// "sha256:" + SHA-256 hex of the normalized text.
std::string checksum_of(std::string_view normalized_text);

// Reads the header directives: lines starting `-- shardctl:` among the leading comment and
// blank lines. Only `no-transaction` exists; any other directive is a data Error naming
// `file:line:col`, so a typo never silently runs a file inside a transaction.
bool no_transaction_header(std::string_view normalized_text, const std::string& file);

// Whether a directory entry is meant as a migration, so it must be one: its name ends in `.sql`
// or starts with V and a digit, V_, R_ (either letter in either case). Names starting with '.'
// and every other name (README.md, notes/) are left alone.
bool looks_like_migration(std::string_view name);

// Checks the text of a file before anything runs, and returns it ready to send: well-formed
// UTF-8 without a NUL byte (the server would see only the text before it), a leading byte
// order mark removed, line endings normalized. Data Error (65) naming `file:line:col`.
std::string migration_text(std::string_view bytes, const std::string& file);

// Refuses (data Error 65, `file:line:col`) transaction control (BEGIN, COMMIT, ROLLBACK,
// SAVEPOINT, ...) in a file: shardctl runs each file in a transaction of its own (or, for a
// no-transaction file, commits each statement), and a COMMIT in the text would commit part of
// a file whose history says it failed.
void refuse_transaction_control(const std::vector<Statement>& statements, std::string_view text,
                                const std::string& file);

// Loads one file of `dir` (its name must parse): a regular file, or a symbolic link to a
// regular file inside `dir`; anything else (a directory, a FIFO, a device, a dangling link, a
// link leading out of `dir`) is refused before it is opened. Data Error (65) naming the file
// for those, for text migration_text refuses, for transaction control, and for a file that
// holds no SQL.
Migration load_file(const std::filesystem::path& dir, const std::string& name);

// All migrations of `dir`, versioned ones in version order, then repeatable ones by name.
// Only entries directly in `dir` whose name looks_like_migration count, and each of them must
// be a valid migration. Usage Error (64) when `dir` is missing or not a directory; data Error
// (65) naming the file for such an entry that is not a valid migration (name, file type,
// text), for two files with the same version, or for an unreadable or empty file.
std::vector<Migration> load_directory(const std::filesystem::path& dir);

// 1-based line and column (in characters) of the byte `offset` in `text`: error positions.
std::pair<int, int> line_col(std::string_view text, std::size_t offset);
// Byte offset of the 1-based character position `pos` (PostgreSQL's error position) in `text`.
std::size_t byte_offset_of_char(std::string_view text, std::size_t pos);

}  // namespace shardctl::schema
