#include "pg/dsn.hpp"

#include <libpq-fe.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace shardctl::pg {
namespace {

constexpr const char* dsn_hint = "use key=value pairs (host=... dbname=...) or a postgresql:// URI";
constexpr int max_nesting = 4;

struct ConninfoFree {
  void operator()(PQconninfoOption* opts) const noexcept { PQconninfoFree(opts); }
};
using ConninfoPtr = std::unique_ptr<PQconninfoOption, ConninfoFree>;

// One keyword=value of a parsed DSN; `nested` holds a dbname that is itself a connection string.
struct Setting {
  std::string key;
  std::string value;
  std::vector<Setting> nested;
  bool is_nested = false;
};

bool is_secret(std::string_view key) { return key == "password" || key == "sslpassword"; }

// libpq's own test (recognized_connection_string in fe-connect.c) for a dbname it expands.
bool looks_like_conninfo(std::string_view v) {
  return v.starts_with("postgresql://") || v.starts_with("postgres://") || v.find('=') != std::string_view::npos;
}

// Whether every item of a comma-separated libpq list (hosts, ports) passes `ok`.
template <typename Pred>
bool all_items(std::string_view list, Pred ok) {
  for (std::size_t start = 0;;) {
    auto end = list.find(',', start);
    if (!ok(list.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start))) return false;
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

// A port as libpq takes it: empty or a number up to 65535.
bool valid_port(std::string_view item) {
  if (item.size() > 5 || item.find_first_not_of("0123456789") != std::string_view::npos) return false;
  return item.empty() || std::stoi(std::string(item)) <= 65535;
}

// '@' can only start an abstract socket name; elsewhere it is a URI whose user part was not
// understood (often a password holding an unencoded '@').
bool valid_host(std::string_view item) { return item.size() <= 1 || item.find('@', 1) == std::string_view::npos; }

// libpq's parse errors quote the fragment they stopped at ("missing "=" after "..."", "invalid
// URI query parameter: "..."") and that fragment may be a password. Keep a quoted fragment only
// when it is syntax ("=") or an option name ("invalid connection option "pasword"" helps).
std::string without_fragments(const std::string& message) {
  std::string out;
  std::size_t pos = 0;
  while (pos < message.size()) {
    auto open = message.find('"', pos);
    auto close = open == std::string::npos ? std::string::npos : message.find('"', open + 1);
    if (close == std::string::npos) {
      out += message.substr(pos);
      break;
    }
    std::string fragment = message.substr(open + 1, close - open - 1);
    bool keyword = !fragment.empty() && fragment.size() <= 40 &&
                   fragment.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos &&
                   message.compare(0, open, "invalid connection option ") == 0;
    out += message.substr(pos, open - pos);
    out += (fragment == "=" || fragment == "]" || keyword) ? '"' + fragment + '"' : std::string("\"(hidden)\"");
    pos = close + 1;
  }
  return out;
}

std::vector<Setting> parse(std::string_view dsn, std::string_view what, int depth) {
  if (dsn.find('\0') != std::string_view::npos)
    throw usage_error(std::string(what) + " is not a valid connection string: it holds a NUL byte", dsn_hint);
  char* err = nullptr;
  ConninfoPtr opts(PQconninfoParse(std::string(dsn).c_str(), &err));
  if (!opts) {
    std::string reason = err ? err : "out of memory";
    if (err) PQfreemem(err);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    throw usage_error(std::string(what) + " is not a valid connection string: " + without_fragments(reason), dsn_hint);
  }
  std::vector<Setting> out;
  for (const auto* o = opts.get(); o->keyword; ++o) {
    if (!o->val) continue;
    Setting s{o->keyword, o->val, {}, false};
    if (s.key == "port" && !all_items(s.value, valid_port))
      throw usage_error(std::string(what) + " has an invalid port (not a number from 1 to 65535)",
                        "in a URI, percent-encode '@' and ':' inside the user name; passwords belong in "
                        "~/.pgpass, PGPASSFILE or a service file");
    if (s.key == "host" && !all_items(s.value, valid_host))
      throw usage_error(std::string(what) + " has a host name holding '@'",
                        "in a URI, percent-encode '@' inside the user name; passwords belong in ~/.pgpass, "
                        "PGPASSFILE or a service file");
    if (s.key == "dbname" && looks_like_conninfo(s.value)) {
      if (depth >= max_nesting)
        throw usage_error(std::string(what) + " nests connection strings in dbname too deeply", dsn_hint);
      s.nested = parse(s.value, std::string(what) + " (in its dbname)", depth + 1);
      s.is_nested = true;
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Setting> parse(std::string_view dsn, std::string_view what = "the connection string") {
  return parse(dsn, what, 0);
}

bool has_secret(const std::vector<Setting>& settings) {
  for (const auto& s : settings)
    if ((is_secret(s.key) && !s.value.empty()) || has_secret(s.nested)) return true;
  return false;
}

// Quotes a value for a key=value conninfo string.
std::string quote_value(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
  return out;
}

bool needs_quotes(std::string_view value) {
  if (value.empty()) return true;
  for (char c : value)
    if (c == ' ' || c == '\'' || c == '\\' || c == '=' || c == '\t' || c == '\n' || c == '\r') return true;
  return false;
}

std::string render(const std::vector<Setting>& settings, bool keep_password,
                   const std::vector<std::pair<std::string, std::string>>& defaults) {
  std::string out;
  auto add = [&](const std::string& key, const std::string& value) {
    if (!out.empty()) out += ' ';
    out += key + "=" + (needs_quotes(value) ? quote_value(value) : value);
  };
  for (const auto& s : settings) {
    if (!keep_password && is_secret(s.key)) continue;
    add(s.key, s.is_nested && !keep_password ? render(s.nested, false, {}) : s.value);
  }
  for (const auto& [key, value] : defaults) {
    bool present = false;
    for (const auto& s : settings) present = present || s.key == key;
    if (!present) add(key, value);
  }
  return out;
}

}  // namespace

void require_valid_dsn(std::string_view dsn, std::string_view what) { parse(dsn, what); }

bool dsn_has_password(std::string_view dsn) { return has_secret(parse(dsn)); }

void require_passwordless_dsn(std::string_view dsn, std::string_view what) {
  if (has_secret(parse(dsn, what)))
    throw usage_error(std::string(what) + " contains a password; shardctl stores and uses none",
                      "remove it and put the credential in ~/.pgpass, PGPASSFILE, a service file or "
                      "PGPASSWORD");
}

std::string redact_dsn(std::string_view dsn) { return render(parse(dsn), false, {}); }

std::string display_dsn(std::string_view dsn) {
  try {
    return redact_dsn(dsn);
  } catch (const Error&) {
    return "(a connection string libpq cannot parse)";
  }
}

std::string normalize_dsn(std::string_view dsn) {
  return render(parse(dsn), true, {{"connect_timeout", "5"}, {"fallback_application_name", "shardctl"}});
}

std::vector<DsnSetting> dsn_settings(std::string_view dsn, std::string_view what) {
  std::vector<DsnSetting> out;
  for (auto& s : parse(dsn, what)) out.push_back({std::move(s.key), std::move(s.value), s.is_nested});
  return out;
}

namespace {

// The value of `key` in the settings (libpq's parse keeps the last of a repeated keyword). A
// dbname holding a connection string is not looked into: PQconnectdb, which every shardctl
// connection goes through, takes it as a database name.
std::optional<std::string> setting(const std::vector<Setting>& settings, std::string_view key) {
  std::optional<std::string> out;
  for (const auto& s : settings)
    if (s.key == key) out = s.value;
  return out;
}

std::string from_environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string server_key(std::string_view dsn) {
  auto settings = parse(dsn);
  auto pick = [&](std::string_view key, const char* env) {
    auto v = setting(settings, key);
    return v && !v->empty() ? *v : from_environment(env);
  };
  std::string hostaddr = pick("hostaddr", "PGHOSTADDR");
  std::string host = pick("host", "PGHOST");
  std::string port = pick("port", "PGPORT");
  if (port.empty()) port = "5432";
  if (!hostaddr.empty()) return hostaddr + ":" + port;
  if (!host.empty()) return host + ":" + port;
  if (auto service = setting(settings, "service"); service && !service->empty()) return "service=" + *service + ":" + port;
  if (auto env_service = from_environment("PGSERVICE"); !env_service.empty()) return "service=" + env_service + ":" + port;
  return "local:" + port;
}

std::string describe_dsn(std::string_view dsn) {
  std::vector<Setting> settings;
  try {
    settings = parse(dsn);
  } catch (const Error&) {
    return "(a connection string libpq cannot parse)";
  }
  std::string out;
  for (const auto& s : settings) {
    if (!(s.key == "host" || s.key == "hostaddr" || s.key == "port" || s.key == "dbname" || s.key == "service"))
      continue;
    if (!out.empty()) out += ' ';
    out += s.key + "=" + (s.is_nested ? quote_value(render(s.nested, false, {})) : s.value);
  }
  return out.empty() ? "(libpq defaults)" : out;
}

}  // namespace shardctl::pg
