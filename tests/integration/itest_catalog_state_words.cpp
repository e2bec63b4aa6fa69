// The catalog's state words and the code's enums say the same thing. Each status, kind and
// step column of schema shardctl takes its words from a CHECK (col IN (...)); the code reads
// and writes them through one enum per column and its to_text (ARCHITECTURE.md, "Typed
// states"). A word the CHECK allows and no enum names would be read as an internal error; an
// enum value the CHECK lacks would fail the write that journals it. This test reads every such
// CHECK of a freshly initialised catalog and requires, for each, exactly the words of its enum,
// and refuses a CHECK it does not know (a new state column gets its row here).
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "archive/run_journal.hpp"
#include "catalog/catalog.hpp"
#include "itest_pg.hpp"
#include "journal/journal.hpp"
#include "migrate/batch_step.hpp"
#include "rebalance/journal.hpp"
#include "routing/key.hpp"

using namespace shardctl;

namespace {

using Words = std::set<std::string>;

// Every word of a core/words.hpp table.
template <typename Table>
Words all_words(const Table& table) {
  Words out;
  for (const auto& [value, word] : table.entries()) out.insert(std::string(word));
  return out;
}

// "table.column" -> the words its enum writes.
std::map<std::string, Words> enum_words() {
  using journal::OperationStatus;
  // `interrupted` is derived (running, and no process holds the runner lock), never stored.
  auto stored_statuses = all_words(journal::operation_status_words);
  stored_statuses.erase(std::string(journal::to_text(OperationStatus::interrupted)));
  return {
      {"shards.status", all_words(catalog::shard_status_words)},
      {"mappings.status", all_words(catalog::mapping_status_words)},
      {"tables.kind", all_words(catalog::table_kind_words)},
      {"maps.kind", all_words(routing::map_kind_words)},
      {"maps.key_type", all_words(routing::key_type_words)},
      {"operations.status", stored_statuses},
      {"op_batches.step", all_words(migrate::batch_step_words)},
      {"archive_shards.state", all_words(archive::shard_state_words)},
      {"archive_batches.step", all_words(archive::batch_step_words)},
      {"rebalance_steps.status", all_words(rebalance::step_status_words)},
  };
}

pg::Connection connect() {
  return pg::Connection(itest::test_dsn(), "catalog");
}

// Every "col = ANY (ARRAY['a'::text, ...])" of every CHECK of schema shardctl, as
// "table.column" -> words (a column named in two CHECKs must give the same words in both).
std::map<std::string, std::vector<Words>> catalog_words(pg::Connection& conn) {
  static const std::regex any_array(R"(\(?(\w+) = ANY \(ARRAY\[([^\]]*)\]\))");
  static const std::regex word(R"('([^']*)'::text)");
  std::map<std::string, std::vector<Words>> out;
  conn.read([&](pqxx::work& tx) {
    auto rows = tx.exec(
        "SELECT c.relname, pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
        "WHERE k.connamespace = 'shardctl'::regnamespace AND k.contype = 'c' ORDER BY 1, 2");
    for (const auto& r : rows) {
      auto table = r[0].as<std::string>();
      auto def = r[1].as<std::string>();
      for (std::sregex_iterator m(def.begin(), def.end(), any_array), end; m != end; ++m) {
        Words ws;
        auto list = (*m)[2].str();
        for (std::sregex_iterator w(list.begin(), list.end(), word); w != end; ++w) ws.insert((*w)[1].str());
        out[table + "." + (*m)[1].str()].push_back(ws);
      }
    }
  });
  return out;
}

std::string joined(const Words& ws) {
  std::string out;
  for (const auto& w : ws) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

TEST_CASE("every state column's CHECK allows exactly its enum's words") {
  auto conn = connect();
  catalog::init_catalog(conn);
  auto found = catalog_words(conn);
  auto expected = enum_words();
  // The query found the columns the code types: a regex that matched nothing would pass below.
  REQUIRE(found.size() >= expected.size());
  for (const auto& [column, lists] : found) {
    INFO("CHECK on shardctl." << column);
    auto it = expected.find(column);
    REQUIRE_MESSAGE(it != expected.end(), "a state column this test does not know: add its enum to enum_words()");
    for (const auto& ws : lists) CHECK_MESSAGE(ws == it->second, "catalog: " << joined(ws) << "; code: " << joined(it->second));
  }
  for (const auto& [column, ws] : expected) CHECK_MESSAGE(found.count(column) == 1, "no CHECK lists the words of " << column);
}
