// PgBouncer 1.18's [databases] section for shards (man/shardctl-export.1). Pure: shard names and
// DSNs in, text out; what the catalog holds is read by catalog_read.hpp.
//
// An entry is `NAME = key=value ...` (PgBouncer's src/loader.c, parse_database): the keys it
// knows there that mean what libpq's keyword of the same name means are host (one), port (one),
// dbname, user, client_encoding and application_name. A shard DSN carrying any other libpq
// option (sslmode, options, target_session_attrs, hostaddr, service, connect_timeout, ...), or
// several hosts (a list PgBouncer walks round-robin, libpq in order until one answers), has no
// exact entry and is refused, naming the option: what is exported means what the DSN means.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardctl::exporter {

struct BouncerEntry {
  std::string name;                                         // the shard's name: the database clients ask for
  std::vector<std::pair<std::string, std::string>> params;  // in the order written
};

// The pool modes PgBouncer knows (`--pool-mode`).
inline constexpr std::string_view pool_modes[] = {"session", "transaction", "statement"};

// Why a shard has no exact entry; `shard` names it.
struct Refusal {
  std::string shard;
  std::string reason;  // one line, never a DSN value that could be a secret
};

// The shard's entry, or why it has none. `dsn` is parsed with libpq's parser (key=value or a
// postgresql:// URI); a DSN libpq cannot parse is a refusal too.
struct EntryOrRefusal {
  std::optional<BouncerEntry> entry;
  std::optional<Refusal> refusal;
};
EntryOrRefusal pgbouncer_entry(const std::string& shard, const std::string& dsn,
                               const std::optional<std::string>& pool_mode = std::nullopt);

// Every shard's entry, in the order given; when any shard has none, a data Error (65) naming
// each refused shard and why (so nothing is written unless all of it is exact).
struct ShardDsn {
  std::string name;
  std::string dsn;
};
std::vector<BouncerEntry> pgbouncer_entries(const std::vector<ShardDsn>& shards,
                                            const std::optional<std::string>& pool_mode = std::nullopt);

// A value as PgBouncer's connection-string parser reads it back (cstr_get_value): bare when it
// holds no space, tab or quote, else in single quotes with '' for a quote. (Values are never
// empty: PgBouncer refuses an empty one, so the caller leaves the key out.)
std::string bouncer_value(std::string_view value);

// Where the bouncer listens, for the `shard set --app-dsn` lines: `--listen HOST:PORT`
// ([v6 address]:PORT also); usage Error otherwise.
struct Listen {
  std::string host;
  int port = 0;
};
Listen parse_listen(const std::string& text);

// A word for the shell: single-quoted unless it is plain ([A-Za-z0-9_./:=@,+-]).
std::string shell_word(std::string_view word);

struct BouncerDocument {
  std::string catalog;       // where the catalog is (host/port/dbname, never a password)
  std::string generated_at;  // UTC, ISO 8601
  std::optional<std::string> map;
  std::vector<BouncerEntry> entries;
  std::optional<Listen> listen;  // none: no `shard set` lines
};

// The section: a comment header, `[databases]`, one line per entry, then (with a listen address)
// the `shardctl shard set NAME --app-dsn '...'` lines as comments.
std::string render_pgbouncer(const BouncerDocument& doc);

}  // namespace shardctl::exporter
