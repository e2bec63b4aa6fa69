// Reading shardctl.toml. Every allowed key is a row of `known_keys` below: adding a setting
// is adding a row (and a field in Config), and unknown keys can never be silently ignored.
#include "config/config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>

#include "config/toml_nesting.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/nesting.hpp"
#include "core/words.hpp"
#include "pg/dsn.hpp"

namespace shardctl::config {
namespace {

enum class Type { string, integer, number, boolean, table, array_of_tables, string_array };

struct KeyDef {
  std::string_view path;  // dotted; "[]" marks the elements of an array of tables
  Type type;
  bool required = false;  // within its table
};

constexpr KeyDef known_keys[] = {
    {"catalog", Type::string},
    {"defaults", Type::table},
    {"defaults.batch_size", Type::integer},
    {"defaults.parallel", Type::integer},
    {"defaults.fence_grace", Type::string},
    {"defaults.max_connections_per_server", Type::integer},
    {"archive", Type::table},
    {"archive.job", Type::array_of_tables},
    {"archive.job[].name", Type::string, true},
    {"archive.job[].table", Type::string, true},
    {"archive.job[].where", Type::string, true},
    {"archive.job[].cascade", Type::boolean},
    {"archive.job[].to", Type::string, true},
    {"archive.job[].batch_size", Type::integer},
    {"archive.job[].max_runtime", Type::string},
    {"archive.job[].sleep", Type::string},
    {"archive.job[].max_lag", Type::string},
    {"check", Type::table},
    {"check.warning", Type::string_array},
    {"check.critical", Type::string_array},
    {"check.ignore", Type::string_array},
    {"check.orphans_critical_at", Type::integer},
    {"check.strays_critical_at", Type::integer},
    {"check.sample", Type::integer},
    // [shards.NAME]: one table per shard; "*" stands for any shard name.
    {"shards", Type::table},
    {"shards.*", Type::table},
    {"shards.*.capacity_bytes", Type::integer},
    {"shards.*.weight", Type::number},
    {"query", Type::table},
    {"query.user", Type::string},
};

// What a key of each type must be, as an error message says it.
constexpr auto type_words = words<Type>({{Type::string, "a string"}, {Type::integer, "an integer"}, {Type::number, "a number"},
                                         {Type::boolean, "true or false"}, {Type::table, "a table"},
                                         {Type::array_of_tables, "an array of tables ([[...]])"},
                                         {Type::string_array, "an array of strings"}})
                                .otherwise("?");
constexpr const auto& words_of(Type) noexcept { return type_words; }

std::string_view node_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date/time";
  }
}

bool matches(Type t, const toml::node& n) {
  switch (t) {
    case Type::string: return n.is_string();
    case Type::integer: return n.is_integer();
    case Type::number: return n.is_integer() || n.is_floating_point();
    case Type::boolean: return n.is_boolean();
    case Type::table: return n.is_table();
    case Type::array_of_tables: return n.is_array_of_tables();
    case Type::string_array: return n.is_array() && (n.as_array()->empty() || n.as_array()->is_homogeneous(toml::node_type::string));
  }
  return false;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  std::string where(const toml::node& n) const {
    const auto& src = n.source();
    return origin_ + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
  }

  [[noreturn]] void fail(const toml::node& n, const std::string& msg, std::string hint = {}) const {
    throw data_error(where(n) + ": " + msg, std::move(hint));
  }

  // An unknown key is reported where the key is written, not where its value is.
  [[noreturn]] void fail_at_key(const toml::key& k, const std::string& msg, std::string hint) const {
    const auto& src = k.source();
    throw data_error(origin_ + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) + ": " +
                         msg,
                     std::move(hint));
  }

  const KeyDef* find(const std::string& schema_path) const {
    for (const auto& k : known_keys)
      if (k.path == schema_path) return &k;
    return nullptr;
  }

  // Checks every key of `table` (whose schema path is `prefix`) against known_keys.
  void check_table(const toml::table& table, const std::string& prefix, const std::string& shown_prefix) const {
    for (const auto& [key, node] : table) {
      std::string name(key.str());
      // Shard names are the operator's: any name is a key of [shards].
      std::string schema_path = prefix.empty() ? name : prefix + "." + (prefix == "shards" ? std::string("*") : name);
      std::string shown = shown_prefix.empty() ? name : shown_prefix + "." + name;
      const KeyDef* def = find(schema_path);
      if (!def) fail_at_key(key, "unknown key \"" + shown + "\"", suggestion(schema_path, prefix));
      if (!matches(def->type, node))
        fail(node, "\"" + shown + "\" must be " + std::string(to_text(def->type)) + ", not " +
                       std::string(node_type_name(node)));
      if (def->type == Type::table) check_table(*node.as_table(), schema_path, shown);
      if (def->type == Type::array_of_tables) {
        std::size_t i = 0;
        for (const auto& elem : *node.as_array()) {
          const auto& t = *elem.as_table();
          check_table(t, schema_path + "[]", shown + "[" + std::to_string(i++) + "]");
          check_required(t, schema_path + "[]", shown);
        }
      }
    }
  }

  void check_required(const toml::table& t, const std::string& schema_prefix, const std::string& shown) const {
    for (const auto& k : known_keys) {
      std::string_view p = k.path;
      if (!k.required || p.substr(0, schema_prefix.size() + 1) != schema_prefix + ".") continue;
      std::string leaf(p.substr(schema_prefix.size() + 1));
      if (!t.contains(leaf)) fail(t, "[[" + shown + "]] is missing the required key \"" + leaf + "\"");
    }
  }

  std::string suggestion(const std::string& schema_path, const std::string& prefix) const {
    std::string best;
    std::size_t best_d = 3;  // suggest only close matches
    for (const auto& k : known_keys) {
      std::string_view p = k.path;
      if (p.substr(0, prefix.size()) != prefix) continue;
      auto d = edit_distance(schema_path, p);
      if (d < best_d) best_d = d, best = std::string(p);
    }
    if (best.empty()) return "see shardctl.toml(5) for the keys a config file may hold";
    auto leaf = best.substr(best.rfind('.') == std::string::npos ? 0 : best.rfind('.') + 1);
    return "did you mean \"" + leaf + "\"?";
  }

  std::string origin_;
};

// A config is a small text file. Anything else (a directory, /dev/zero, a FIFO, a 2 GB log
// named by mistake) is refused before it is read, so a wrong -c never hangs or eats memory.
constexpr std::uintmax_t max_config_bytes = 1 << 20;

std::string read_file(const std::filesystem::path& path) {
  return read_input_file(path, {"config file", max_config_bytes, ErrorKind::data,
                                "name a TOML file with -c/--config or $SHARDCTL_CONFIG"});
}

// A connection string in the config must be one libpq parses and must hold no password; the
// message names the key and where it is written.
void check_dsn(const Reader& reader, const toml::node& node, const std::string& key, const std::string& dsn) {
  try {
    pg::require_passwordless_dsn(dsn, "\"" + key + "\"");
  } catch (const Error& e) {
    reader.fail(node, e.what(), e.hint());
  }
}

// [check]: every named kind must exist, and a kind graded twice is a contradiction.
void read_check(const Reader& reader, const toml::table& root, CheckConfig& out) {
  const toml::table* check = root["check"].as_table();
  if (!check) return;
  std::vector<std::pair<std::string, std::string>> graded;  // kind, list it is in
  for (const char* list : {"warning", "critical", "ignore"}) {
    const toml::array* arr = (*check)[list].as_array();
    if (!arr) continue;
    auto& dest = std::string_view(list) == "warning" ? out.warning : std::string_view(list) == "critical" ? out.critical : out.ignore;
    for (const auto& elem : *arr) {
      std::string kind = *elem.value<std::string>();
      bool known = false;
      for (auto k : check_finding_kinds) known = known || k == kind;
      if (!known) {
        std::string all;
        for (auto k : check_finding_kinds) all += (all.empty() ? "" : ", ") + std::string(k);
        reader.fail(elem, "\"check." + std::string(list) + "\" names an unknown finding kind \"" + kind + "\"",
                    "finding kinds: " + all);
      }
      for (const auto& [k, in] : graded)
        if (k == kind) reader.fail(elem, "finding kind \"" + kind + "\" is in both check." + in + " and check." + list);
      graded.emplace_back(kind, list);
      dest.push_back(kind);
    }
  }
  for (const char* key : {"orphans_critical_at", "strays_critical_at", "sample"}) {
    auto node = (*check)[key];
    if (!node) continue;
    auto v = *node.value<std::int64_t>();
    if (v < (std::string_view(key) == "sample" ? 0 : 1))
      reader.fail(*node.node(), "\"check." + std::string(key) + "\" must be at least " +
                                    (std::string_view(key) == "sample" ? "0" : "1"));
    if (std::string_view(key) == "orphans_critical_at") out.orphans_critical_at = v;
    else if (std::string_view(key) == "strays_critical_at") out.strays_critical_at = v;
    else out.sample = v;
  }
}

// [shards.NAME]: capacity in bytes (at least 1) and weight (above 0) of each named shard. The
// names are not checked against the catalog here: the config may be read with no catalog.
void read_shards(const Reader& reader, const toml::table& root, std::vector<ShardConfig>& out) {
  const toml::table* shards = root["shards"].as_table();
  if (!shards) return;
  for (const auto& [key, node] : *shards) {
    const auto& t = *node.as_table();
    ShardConfig sc;
    sc.name = std::string(key.str());
    if (auto n = t["capacity_bytes"].value<std::int64_t>()) {
      if (*n < 1) reader.fail(*t.get("capacity_bytes"), "\"shards." + sc.name + ".capacity_bytes\" must be at least 1");
      sc.capacity_bytes = *n;
    }
    if (auto w = t["weight"].value<double>()) {
      if (!(*w > 0) || *w > 1e9) reader.fail(*t.get("weight"), "\"shards." + sc.name + ".weight\" must be above 0");
      sc.weight = *w;
    }
    out.push_back(std::move(sc));
  }
}

// [query] user: a PostgreSQL role name (at most 63 bytes, as the server keeps them), put into
// each shard's connection string in place of its user.
void read_query(const Reader& reader, const toml::table& root, QueryConfig& out) {
  auto node = root["query"]["user"];
  if (!node) return;
  auto user = *node.value<std::string>();
  if (user.empty() || user.size() > 63 || user.find('\0') != std::string::npos)
    reader.fail(*node.node(), "\"query.user\" must be a role name of 1 to 63 bytes");
  out.user = user;
}

// The TOML document of a config: refused (data Error naming file:line:col) when it nests too
// deep for toml++ or does not parse.
toml::table parse_toml(std::string_view text, const std::string& origin) {
  // Before toml++ sees it: toml++ recurses once per level, and a key of 40,000 dotted parts ran
  // it out of stack.
  if (auto deep = toml_too_deep_at(text, max_input_nesting); deep != std::string_view::npos) {
    auto p = position_of(text, deep);
    throw data_error(origin + ":" + std::to_string(p.line) + ":" + std::to_string(p.column) + ": nested more than " +
                         std::to_string(max_input_nesting) +
                         " levels deep (dotted key parts, [table.header] parts, arrays and inline tables)",
                     "see shardctl.toml(5) for the keys a config file may hold: none is more than 4 levels deep");
  }
  try {
    return toml::parse(text, std::string_view(origin));
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw data_error(origin + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) + ": " +
                     std::string(e.description()));
  }
}

// catalog: a passwordless connection string.
void read_catalog(const Reader& reader, const toml::table& root, Config& cfg) {
  if (auto v = root["catalog"].value<std::string>()) {
    check_dsn(reader, *root.get("catalog"), "catalog", *v);
    cfg.catalog = *v;
  }
}

// [defaults]: batch_size, parallel and max_connections_per_server (at least 1), fence_grace (a
// duration).
void read_defaults(const Reader& reader, const toml::table& root, Config& cfg) {
  for (const char* key : {"batch_size", "parallel"}) {
    auto node = root["defaults"][key];
    if (!node) continue;
    auto v = *node.value<std::int64_t>();
    if (v < 1) reader.fail(*node.node(), "\"defaults." + std::string(key) + "\" must be at least 1");
    (std::string_view(key) == "batch_size" ? cfg.batch_size : cfg.parallel) = v;
  }
  if (auto node = root["defaults"]["max_connections_per_server"]) {
    auto v = *node.value<std::int64_t>();
    if (v < 1) reader.fail(*node.node(), "\"defaults.max_connections_per_server\" must be at least 1");
    cfg.max_connections_per_server = v;
  }
  if (auto node = root["defaults"]["fence_grace"]) {
    auto text = *node.value<std::string>();
    cfg.fence_grace = grace_interval(text);
    if (!cfg.fence_grace)
      reader.fail(*node.node(), "\"defaults.fence_grace\" must be a duration like 30m, 12h or 7d, not \"" + text + "\"");
  }
}

// One [[archive.job]]: its destination (dir: or a passwordless postgres: DSN), batch size and
// durations. Its keys and their types were checked against known_keys already.
ArchiveJob read_archive_job(const Reader& reader, const toml::table& t) {
  ArchiveJob job;
  job.name = *t["name"].value<std::string>();
  job.table = *t["table"].value<std::string>();
  job.where = *t["where"].value<std::string>();
  job.cascade = t["cascade"].value_or(false);
  job.to = *t["to"].value<std::string>();
  if (job.to.rfind("dir:", 0) != 0 && job.to.rfind("postgres:", 0) != 0)
    reader.fail(*t.get("to"), "archive job \"" + job.name + "\": \"to\" must start with dir: or postgres:");
  if (job.to.rfind("postgres:", 0) == 0)
    check_dsn(reader, *t.get("to"), "archive.job.to", job.to.substr(std::string_view("postgres:").size()));
  if (auto n = t["batch_size"].value<std::int64_t>()) {
    if (*n < 1) reader.fail(*t.get("batch_size"), "archive job \"" + job.name + "\": \"batch_size\" must be at least 1");
    job.batch_size = *n;
  }
  for (auto [key, dest] : {std::pair{"max_runtime", &job.max_runtime}, std::pair{"sleep", &job.sleep},
                           std::pair{"max_lag", &job.max_lag}}) {
    auto node = t[key];
    if (!node) continue;
    auto text = *node.value<std::string>();
    *dest = parse_duration(text);
    if (!*dest)
      reader.fail(*t.get(key), "archive job \"" + job.name + "\": \"" + key +
                                   "\" must be a duration like 500ms, 30s, 10m or 2h, not \"" + text + "\"");
  }
  return job;
}

// [[archive.job]]: each job, under a name no other job has.
void read_archive_jobs(const Reader& reader, const toml::table& root, std::vector<ArchiveJob>& out) {
  auto jobs = root["archive"]["job"].as_array();
  if (!jobs) return;
  for (const auto& elem : *jobs) {
    const auto& t = *elem.as_table();
    auto job = read_archive_job(reader, t);
    for (const auto& other : out)
      if (other.name == job.name) reader.fail(*t.get("name"), "archive job name \"" + job.name + "\" is used twice");
    out.push_back(std::move(job));
  }
}

}  // namespace

const ShardConfig* Config::shard(const std::string& name) const {
  for (const auto& s : shards)
    if (s.name == name) return &s;
  return nullptr;
}

std::optional<std::filesystem::path> locate_config(const std::optional<std::string>& explicit_path) {
  namespace fs = std::filesystem;
  auto named = [](const std::string& p, const char* how) -> fs::path {
    std::error_code ec;
    if (!fs::exists(p, ec))
      throw usage_error("config file " + p + " does not exist", std::string("it was named by ") + how);
    return p;
  };
  if (explicit_path) return named(*explicit_path, "--config");
  if (const char* env = std::getenv("SHARDCTL_CONFIG"); env && *env) return named(env, "$SHARDCTL_CONFIG");
  std::error_code ec;
  if (fs::exists("shardctl.toml", ec)) return fs::absolute("shardctl.toml");
  fs::path xdg;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) xdg = x;
  else if (const char* home = std::getenv("HOME"); home && *home) xdg = fs::path(home) / ".config";
  if (!xdg.empty() && fs::exists(xdg / "shardctl" / "config.toml", ec)) return xdg / "shardctl" / "config.toml";
  return std::nullopt;
}

Config parse_config(std::string_view text, const std::string& origin) {
  toml::table root = parse_toml(text, origin);
  Reader reader(origin);
  reader.check_table(root, "", "");
  Config cfg;
  read_catalog(reader, root, cfg);
  read_defaults(reader, root, cfg);
  read_archive_jobs(reader, root, cfg.archive_jobs);
  read_check(reader, root, cfg.check);
  read_shards(reader, root, cfg.shards);
  read_query(reader, root, cfg.query);
  return cfg;
}

std::optional<std::string> grace_interval(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && digits < 9 && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits + 1 != text.size()) return std::nullopt;
  std::string unit;
  switch (text.back()) {
    case 's': unit = " seconds"; break;
    case 'm': unit = " minutes"; break;
    case 'h': unit = " hours"; break;
    case 'd': unit = " days"; break;
    default: return std::nullopt;
  }
  return text.substr(0, digits) + unit;
}

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && digits < 9 && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  std::int64_t n = std::stoll(text.substr(0, digits));
  std::string unit = text.substr(digits);
  if (unit == "ms") return std::chrono::milliseconds(n);
  if (unit == "s") return std::chrono::milliseconds(n * 1000);
  if (unit == "m") return std::chrono::milliseconds(n * 60'000);
  if (unit == "h") return std::chrono::milliseconds(n * 3'600'000);
  if (unit == "d") return std::chrono::milliseconds(n * 86'400'000);
  return std::nullopt;
}

Config load_config(const std::optional<std::string>& explicit_path) {
  auto path = locate_config(explicit_path);
  if (!path) return Config{};
  Config cfg = parse_config(read_file(*path), path->string());
  cfg.path = *path;
  return cfg;
}

}  // namespace shardctl::config
