#include "complete_names.hpp"

#include <unistd.h>

#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/context.hpp"
#include "pg/connection.hpp"
#include "pg/dsn.hpp"
#include "journal/journal.hpp"

namespace shardctl::apps {
namespace {

// Bounds the whole lookup, however many round trips it takes: a shell waits for it.
constexpr unsigned hard_limit_seconds = 3;

std::vector<std::string> names(pg::Connection& conn, const std::string& kind) {
  std::vector<std::string> out;
  if (kind == "ops") {
    for (const auto& op : journal::list_operations(conn)) out.push_back(op.id);
    return out;
  }
  catalog::Store store(conn);
  if (kind == "maps")
    for (const auto& m : store.list_maps()) out.push_back(m.name);
  else if (kind == "shards")
    for (const auto& s : store.list_shards()) out.push_back(s.name);
  return out;
}

}  // namespace

int complete_names(int argc, char** argv, int at) {
  if (at + 1 >= argc) return 1;
  std::string kind = argv[at + 1];
  if (kind != "maps" && kind != "shards" && kind != "ops") return 1;
  std::signal(SIGALRM, [](int) { ::_exit(1); });
  ::alarm(hard_limit_seconds);
  cli::GlobalOptions g;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    if (a == "-c" || a == "--config") g.config_path = argv[++i];
    else if (a == "--catalog") g.catalog = argv[++i];
  }
  try {
    cli::Context ctx("complete", g);
    // libpq keeps the last value of a repeated keyword: the short timeout wins.
    pg::Connection conn(pg::normalize_dsn(ctx.catalog_dsn()) + " connect_timeout=2", "catalog");
    pqxx::nontransaction(conn.raw()).exec("SET statement_timeout = 2000");
    for (const auto& name : names(conn, kind)) std::cout << name << '\n';
    return 0;
  } catch (...) {
    return 1;  // no catalog, unreachable, too slow: no names, and nothing said
  }
}

}  // namespace shardctl::apps
