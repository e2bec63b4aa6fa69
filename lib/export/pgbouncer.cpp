#include "export/pgbouncer.hpp"

#include <algorithm>
#include <charconv>

#include "core/error.hpp"
#include "pg/dsn.hpp"

namespace shardctl::exporter {
namespace {

// libpq keywords an entry carries under the same name and meaning (PgBouncer 1.18, doc/config.md,
// "Section [databases]"; src/loader.c sends client_encoding and application_name to the server as
// startup parameters, as libpq does).
constexpr std::string_view same_meaning[] = {"host", "port", "dbname", "user", "client_encoding", "application_name"};

// What a libpq option does that no [databases] entry can say, for the refusal's message.
std::string why_not(std::string_view key) {
  if (key.starts_with("ssl") || key == "requiressl" || key == "gssencmode" || key == "krbsrvname" || key == "gsslib")
    return "PgBouncer sets TLS and GSS for every server connection at once (server_tls_*), not per database";
  if (key == "hostaddr") return "PgBouncer has host only (write the address as host=)";
  if (key == "connect_timeout") return "PgBouncer's server_connect_timeout is global, not per database";
  if (key == "target_session_attrs" || key == "load_balance_hosts") return "PgBouncer does not choose among servers by state";
  if (key == "service") return "PgBouncer does not read pg_service.conf";
  if (key == "passfile") return "PgBouncer takes credentials from auth_file or auth_query";
  if (key == "options") return "PgBouncer sends no command-line options to the server";
  return "a [databases] entry of PgBouncer 1.18 has no such parameter";
}

bool plain_port(std::string_view v) {
  int port = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), port);
  return ec == std::errc() && end == v.data() + v.size() && port >= 1 && port <= 65535;
}

}  // namespace

std::string bouncer_value(std::string_view value) {
  bool quote = value.empty() || value.find_first_of(" \t'\r\n\v\f") != std::string_view::npos;
  if (!quote) return std::string(value);
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

EntryOrRefusal pgbouncer_entry(const std::string& shard, const std::string& dsn, const std::optional<std::string>& pool_mode) {
  auto refuse = [&](std::string reason) { return EntryOrRefusal{std::nullopt, Refusal{shard, std::move(reason)}}; };
  // PgBouncer's ini reader takes a key of [A-Za-z0-9_.-] (libusual's cfparser, as 1.18 ships
  // it: no quoted keys); shard names are always that (catalog/names.cpp), but never assume.
  bool name_ok = !shard.empty() && std::all_of(shard.begin(), shard.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
  if (!name_ok) return refuse("the name is not one PgBouncer 1.18 reads as a database name ([A-Za-z0-9_.-])");
  if (shard == "pgbouncer") return refuse("the name pgbouncer is PgBouncer's admin console");
  std::vector<pg::DsnSetting> settings;
  try {
    settings = pg::dsn_settings(dsn, "its DSN");
  } catch (const Error& e) {
    return refuse(e.what());
  }
  BouncerEntry entry{shard, {}};
  std::optional<std::string> host, port, dbname, user, encoding, app;
  for (const auto& s : settings) {
    if (std::find(std::begin(same_meaning), std::end(same_meaning), s.key) == std::end(same_meaning))
      return refuse("its DSN sets " + s.key + ": " + why_not(s.key));
    if (s.value.find_first_of(std::string_view("\n\r\0", 3)) != std::string::npos)
      return refuse("its DSN's " + s.key + " holds a line break, which a PgBouncer config line cannot");
    if (s.key == "host") host = s.value;
    if (s.key == "port") port = s.value;
    if (s.key == "dbname") {
      if (s.nested) return refuse("its DSN's dbname is itself a connection string, which PgBouncer does not expand");
      dbname = s.value;
    }
    if (s.key == "user") user = s.value;
    if (s.key == "client_encoding") encoding = s.value;
    if (s.key == "application_name") app = s.value;
  }
  if (!host || host->empty())
    return refuse("its DSN names no host: libpq would take PGHOST or its own socket directory, PgBouncer its "
                  "unix_socket_dir; name host= in the DSN");
  if (host->find(',') != std::string::npos)
    return refuse("its DSN names several hosts: libpq tries them in order, PgBouncer 1.18 uses them round-robin");
  if (port && port->find(',') != std::string::npos) return refuse("its DSN names several ports");
  if (port && !port->empty() && !plain_port(*port)) return refuse("its DSN's port is not a number from 1 to 65535");
  if (!dbname || dbname->empty())
    return refuse("its DSN names no dbname: libpq would take PGDATABASE or the user name, PgBouncer the shard's "
                  "name; name dbname= in the DSN");
  if (encoding && (encoding->empty() || *encoding == "auto"))
    return refuse("its DSN's client_encoding is taken from the client's locale by libpq, which PgBouncer cannot");
  entry.params.emplace_back("host", *host);
  if (port && !port->empty()) entry.params.emplace_back("port", *port);
  entry.params.emplace_back("dbname", *dbname);
  if (user && !user->empty()) entry.params.emplace_back("user", *user);
  if (encoding) entry.params.emplace_back("client_encoding", *encoding);
  if (app && !app->empty()) entry.params.emplace_back("application_name", *app);
  if (pool_mode) entry.params.emplace_back("pool_mode", *pool_mode);
  return EntryOrRefusal{std::move(entry), std::nullopt};
}

std::vector<BouncerEntry> pgbouncer_entries(const std::vector<ShardDsn>& shards, const std::optional<std::string>& pool_mode) {
  std::vector<BouncerEntry> entries;
  std::vector<Refusal> refused;
  for (const auto& s : shards) {
    auto r = pgbouncer_entry(s.name, s.dsn, pool_mode);
    if (r.entry) entries.push_back(std::move(*r.entry));
    else refused.push_back(std::move(*r.refusal));
  }
  if (refused.empty()) return entries;
  std::string message = std::to_string(refused.size()) + " shard(s) have no exact PgBouncer entry: ";
  for (std::size_t i = 0; i < refused.size(); ++i)
    message += (i ? "; " : "") + std::string("shard ") + refused[i].shard + ": " + refused[i].reason;
  throw data_error(message, "change the shard's DSN (`shardctl shard set` cannot; re-register it), or export only "
                            "the shards of a map with --map; nothing was written");
}

Listen parse_listen(const std::string& text) {
  auto colon = text.rfind(':');
  auto bad = [&] {
    return usage_error("--listen '" + text + "' is not HOST:PORT", "write e.g. --listen pgbouncer.internal:6432 or --listen [::1]:6432");
  };
  if (colon == std::string::npos || colon == 0) throw bad();
  std::string host = text.substr(0, colon), port = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || host.find_first_of(" \t'\"\\,") != std::string::npos || !plain_port(port)) throw bad();
  return Listen{host, std::stoi(port)};
}

std::string shell_word(std::string_view word) {
  bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./:=@,+-").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string render_pgbouncer(const BouncerDocument& doc) {
  std::string out;
  out += "; PgBouncer [databases] entries for the shards of the shardctl catalog " + doc.catalog;
  if (doc.map) out += " used by map " + *doc.map;
  out += "\n; written by `shardctl export pgbouncer` at " + doc.generated_at + "\n";
  out += "; credentials come from PgBouncer's auth_file or auth_query, never from here\n";
  out += "[databases]\n";
  for (const auto& e : doc.entries) {
    out += e.name + " =";
    for (const auto& [k, v] : e.params) out += " " + k + "=" + bouncer_value(v);
    out += '\n';
  }
  if (doc.listen && !doc.entries.empty()) {
    out += "\n; To give applications this bouncer (" + doc.listen->host + ":" + std::to_string(doc.listen->port) +
           ") as the shards' address (shardctl.route() returns it), run:\n";
    for (const auto& e : doc.entries) {
      std::string dsn = "host=" + bouncer_value(doc.listen->host) + " port=" + std::to_string(doc.listen->port) + " dbname=" + e.name;
      out += "; shardctl shard set " + shell_word(e.name) + " --app-dsn " + shell_word(dsn) + "\n";
    }
  }
  return out;
}

}  // namespace shardctl::exporter
