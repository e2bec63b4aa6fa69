// shardctl lookup: which shard holds these keys. Keys as arguments, or `-` to stream stdin.
#include <unistd.h>

#include <iostream>
#include <optional>

#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "core/error.hpp"
#include "cli/family.hpp"
#include "lookup/stream.hpp"
#include "routing/pg_hash.hpp"

using namespace shardctl;

namespace {

// `lookup --map M -` in text: keys streamed from stdin to stdout, routed as they come.
void stream_keys(cli::Context& ctx, const std::string& map, const catalog::LoadedMap& loaded,
                 const std::vector<std::string>& names) {
  auto stats = lookup::stream_lookup(*loaded.router, names, STDIN_FILENO, STDOUT_FILENO);
  if (stats.output_closed) return;
  ctx.verbose(std::to_string(stats.keys) + " keys routed");
  if (stats.unmapped)
    ctx.warn(std::to_string(stats.unmapped) + " key(s) are not mapped by map " + map + " (shown as -)");
  if (stats.offline) ctx.note(std::to_string(stats.offline) + " key(s) are in offline mappings (being moved)");
}

std::vector<std::string> stdin_lines() {
  std::vector<std::string> keys;
  for (std::string line; std::getline(std::cin, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    keys.push_back(line);
  }
  return keys;
}

// Routes each key, printing a line per key (text) or one document (JSON).
void route_keys(cli::Context& ctx, const std::string& map, const catalog::LoadedMap& loaded, const std::vector<std::string>& names,
                const std::vector<std::string>& keys, bool from_stdin) {
  nlohmann::json results = nlohmann::json::array();
  std::uint64_t unmapped = 0;
  // A mapping's part of a result (bounds, the displayed DSN) is made once per mapping, not per
  // key: displaying a DSN parses it. Slot 0 is the unmapped keys'.
  std::vector<std::optional<nlohmann::json>> by_entry(loaded.mappings.size() + 1);
  auto entry_json = [&](std::int32_t entry) -> const nlohmann::json& {
    if (entry < 0 || static_cast<std::size_t>(entry) >= loaded.mappings.size()) entry = -1;
    auto& slot = by_entry[static_cast<std::size_t>(entry + 1)];
    if (!slot) slot = catalog::route_json(loaded, entry);
    return *slot;
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    routing::Key key;
    try {
      key = routing::parse_key(loaded.map.key_type, keys[i]);
    } catch (const shardctl::Error& e) {
      if (from_stdin) throw usage_error("stdin:" + std::to_string(i + 1) + ": " + e.what(), e.hint());
      throw;
    }
    auto route = loaded.router->route(key);
    bool mapped = route && route->shard_index >= 0;
    unmapped += mapped ? 0 : 1;
    if (ctx.json()) {
      nlohmann::json r = {{"key", keys[i]},
                          {"shard", mapped ? nlohmann::json(names[static_cast<std::size_t>(route->shard_index)])
                                           : nlohmann::json(nullptr)},
                          {"status", mapped ? (route->online ? "online" : "offline") : "unmapped"}};
      if (loaded.map.kind == routing::MapKind::hash) r["hash"] = routing::hash_key(loaded.map.key_type, key);
      r.update(entry_json(mapped && route->entry_index >= 0 ? route->entry_index : -1));
      results.push_back(r);
    } else {
      ctx.out() << keys[i] << '\t' << (mapped ? names[static_cast<std::size_t>(route->shard_index)] : "-") << '\n';
    }
  }
  if (ctx.json()) ctx.print_json({{"map", map}, {"results", results}});
  if (unmapped) ctx.warn(std::to_string(unmapped) + " key(s) are not mapped by map " + map + (ctx.json() ? "" : " (shown as -)"));
}

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("lookup", "Route keys to shards (arguments, or a stream on stdin)");
  std::string map;
  std::vector<std::string> keys;
  fam.app().add_option("--map", map, "Map to route by")->required()->type_name("MAP");
  fam.app().add_option("KEY", keys, "Keys to route; `-` reads keys from stdin, one per line")->required();
  fam.root_handler([&](cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto loaded = store.load_map(map);
    std::vector<std::string> names;
    for (const auto& s : loaded.shards) names.push_back(s.name);
    bool from_stdin = keys.size() == 1 && keys[0] == "-";
    if (from_stdin && !ctx.json()) return stream_keys(ctx, map, loaded, names);
    // JSON wants whole lines: read them all first.
    route_keys(ctx, map, loaded, names, from_stdin ? stdin_lines() : keys, from_stdin);
  });
  return fam.main(argc, argv);
}
