#include "pg/dsn.hpp"

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace shardctl::pg {
namespace {

struct ConninfoFree {
  void operator()(PQconninfoOption* opts) const noexcept { PQconninfoFree(opts); }
};
using ConninfoPtr = std::unique_ptr<PQconninfoOption, ConninfoFree>;

ConninfoPtr parse(std::string_view dsn) {
  char* err = nullptr;
  ConninfoPtr opts(PQconninfoParse(std::string(dsn).c_str(), &err));
  if (!opts) {
    std::string reason = err ? err : "out of memory";
    if (err) PQfreemem(err);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    // libpq's message can quote the offending fragment, which may hold a password: keep only
    // its general shape.
    throw usage_error("invalid connection string: " + reason.substr(0, reason.find('"')),
                      "use key=value pairs (host=... dbname=...) or a postgresql:// URI");
  }
  return opts;
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
    if (c == ' ' || c == '\'' || c == '\\' || c == '=' || c == '\t' || c == '\n') return true;
  return false;
}

std::string render(const PQconninfoOption* opts, bool keep_password,
                   const std::vector<std::pair<std::string, std::string>>& defaults) {
  std::string out;
  std::vector<std::string> seen;
  for (const auto* o = opts; o->keyword; ++o) {
    if (!o->val) continue;
    std::string key = o->keyword;
    if (!keep_password && key == "password") continue;
    seen.push_back(key);
    if (!out.empty()) out += ' ';
    out += key + "=" + (needs_quotes(o->val) ? quote_value(o->val) : std::string(o->val));
  }
  for (const auto& [key, value] : defaults) {
    bool present = false;
    for (const auto& s : seen) present = present || s == key;
    if (present) continue;
    if (!out.empty()) out += ' ';
    out += key + "=" + value;
  }
  return out;
}

}  // namespace

bool dsn_has_password(std::string_view dsn) {
  auto opts = parse(dsn);
  for (const auto* o = opts.get(); o->keyword; ++o)
    if (std::string_view(o->keyword) == "password" && o->val && *o->val) return true;
  return false;
}

std::string redact_dsn(std::string_view dsn) { return render(parse(dsn).get(), false, {}); }

std::string normalize_dsn(std::string_view dsn) {
  return render(parse(dsn).get(), true,
                {{"connect_timeout", "5"}, {"fallback_application_name", "shardctl"}});
}

std::string describe_dsn(std::string_view dsn) {
  auto opts = parse(dsn);
  std::string out;
  for (const auto* o = opts.get(); o->keyword; ++o) {
    std::string_view key = o->keyword;
    if (!o->val || !(key == "host" || key == "hostaddr" || key == "port" || key == "dbname" ||
                     key == "service"))
      continue;
    if (!out.empty()) out += ' ';
    out += std::string(key) + "=" + o->val;
  }
  return out.empty() ? "(libpq defaults)" : out;
}

}  // namespace shardctl::pg
