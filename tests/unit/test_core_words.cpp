// core/words.hpp: one table per enum gives its words both ways.
#include <doctest/doctest.h>

#include <set>

#include "catalog/catalog.hpp"
#include "core/error.hpp"
#include "core/words.hpp"
#include "journal/journal.hpp"
#include "routing/key.hpp"

using namespace shardctl;

namespace {

enum class Colour { red, green, blue };
constexpr auto colour_words = words<Colour>({{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}});

// Every value and every word of a table is distinct, and each reads back as itself.
template <typename Table>
void check_table_round_trips(const Table& table) {
  std::set<std::string_view> seen;
  for (const auto& [value, word] : table.entries()) {
    CHECK_FALSE(word.empty());
    CHECK(seen.insert(word).second);
    CHECK(table.text(value) == word);
    REQUIRE(table.find(word));
    CHECK(*table.find(word) == value);
  }
}

}  // namespace

TEST_CASE("a table gives each value's word and reads it back") {
  static_assert(colour_words.text(Colour::green) == "green");
  static_assert(colour_words.find("blue") == Colour::blue);
  static_assert(!colour_words.find("Blue"));
  static_assert(colour_words.entries().size() == 3);
  CHECK(colour_words.read("red", "colour", "the palette") == Colour::red);
}

TEST_CASE("a stored word no table knows is an internal error naming it and where it was read") {
  try {
    colour_words.read("mauve", "colour", "the palette");
    FAIL("read accepted an unknown word");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::internal);
    CHECK(std::string(e.what()) == "unknown colour 'mauve' in the palette");
  }
  CHECK_FALSE(colour_words.find(""));
}

TEST_CASE("the catalog's, journal's and routing's tables are one-to-one") {
  check_table_round_trips(catalog::shard_status_words);
  check_table_round_trips(catalog::mapping_status_words);
  check_table_round_trips(catalog::table_kind_words);
  check_table_round_trips(journal::operation_status_words);
  check_table_round_trips(journal::operation_kind_words);
  check_table_round_trips(routing::key_type_words);
  check_table_round_trips(routing::map_kind_words);
  CHECK(catalog::shard_status_words.entries().size() == 3);
  CHECK(journal::operation_kind_words.entries().size() == 9);
}
