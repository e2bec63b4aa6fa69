#include "check/fix_lock.hpp"

#include <set>

#include "catalog/locks.hpp"
#include "catalog/operation_sql.hpp"
#include "core/error.hpp"

namespace shardctl::check {
namespace {

// "ID (split, running), ID (move, paused)": the unfinished operations of a map.
std::string live_operations(pg::Connection& catalog, std::int64_t map_id, std::string& first_id) {
  std::string out;
  catalog.read([&](pqxx::work& tx) {
    for (const auto& r : tx.exec_params("SELECT op_id::text, kind, status FROM shardctl.operations "
                                        "WHERE map_id = $1 AND " + catalog::operation_is_live() + " ORDER BY created_at",
                                        map_id)) {
      if (first_id.empty()) first_id = r[0].as<std::string>();
      out += (out.empty() ? "" : ", ") + r[0].as<std::string>() + " (" + r[1].as<std::string>() + ", " +
             r[2].as<std::string>() + ")";
    }
  });
  return out;
}

}  // namespace

FixLock::FixLock(pg::Connection& catalog, const Fleet& fleet) : catalog_(catalog) {
  std::set<std::string> names;
  for (const auto& t : fleet.sharded_tables)
    if (t.map) names.insert(*t.map);
  std::set<std::pair<std::int64_t, std::string>> maps;  // id order: every fixer takes them alike
  for (const auto& n : names)
    if (fleet.maps.count(n)) maps.insert({fleet.map(n).map.id, n});
  try {
    for (const auto& [id, name] : maps) {
      bool got = false;
      catalog_.read([&](pqxx::work& tx) {
        got = tx.exec_params1(catalog::map_data_lock_exclusive_sql, catalog::lock_class, id)[0].as<bool>();
      });
      if (got) {
        held_.push_back(id);
        continue;
      }
      std::string first;
      std::string ops = live_operations(catalog_, id, first);
      if (ops.empty())
        throw locked_error("cannot fix rows of map " + name +
                               ": another process holds its data lock (a split, merge or move starting or ending, "
                               "or another check --fix)",
                           "try again later; `shardctl op list` shows the operations");
      throw locked_error("cannot fix rows of map " + name + " while an operation moves its data: " + ops,
                         "wait for it (`shardctl op wait " + first + "`) and run the fix again; `shardctl op list` "
                         "shows the operations");
    }
  } catch (...) {
    release();
    throw;
  }
}

FixLock::~FixLock() { release(); }

void FixLock::release() noexcept {
  for (auto id : held_) {
    try {
      catalog_.read([&](pqxx::work& tx) { tx.exec_params(catalog::map_data_unlock_exclusive_sql, catalog::lock_class, id); });
    } catch (...) {  // the connection is gone: the server released the session's locks with it
    }
  }
  held_.clear();
}

}  // namespace shardctl::check
