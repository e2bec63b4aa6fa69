// core/words.hpp: one table per enum gives its words both ways.
#include <doctest/doctest.h>

#include <array>

#include "catalog/catalog.hpp"
#include "core/words.hpp"
#include "journal/journal.hpp"
#include "routing/key.hpp"
#include "words_checks.hpp"

using namespace shardctl;

namespace {

enum class Colour { red, green, blue };
constexpr auto colour_words = words<Colour>({{Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}});

}  // namespace

TEST_CASE("a table gives each value's word and reads it back") {
  static_assert(colour_words.text(Colour::green) == "green");
  static_assert(colour_words.find("blue") == Colour::blue);
  static_assert(!colour_words.find("Blue"));
  static_assert(colour_words.entries().size() == 3);
  static_assert(colour_words.values() == std::array{Colour::red, Colour::green, Colour::blue});
  CHECK(colour_words.read("red", "colour", "the palette") == Colour::red);
}

TEST_CASE("a stored word no table knows is an internal error naming it and where it was read") {
  test::check_unknown_words([](std::string_view word) { return colour_words.read(word, "colour", "the palette"); },
                            {"mauve"}, "unknown colour '{}' in the palette");
  CHECK_FALSE(colour_words.find(""));
}

TEST_CASE("a value the table lacks has no word, or the fallback a to_text gives it") {
  constexpr auto out_of_range = static_cast<Colour>(7);
  static_assert(colour_words.text(out_of_range).empty());
  static_assert(colour_words.text_or(out_of_range, "?") == "?");
  static_assert(colour_words.text_or(Colour::blue, "?") == "blue");
}

TEST_CASE("the catalog's, journal's and routing's tables are one-to-one") {
  test::check_one_to_one(catalog::shard_status_words);
  test::check_one_to_one(catalog::mapping_status_words);
  test::check_one_to_one(catalog::table_kind_words);
  test::check_one_to_one(journal::operation_status_words);
  test::check_one_to_one(journal::operation_kind_words);
  test::check_one_to_one(routing::key_type_words);
  test::check_one_to_one(routing::map_kind_words);
  CHECK(catalog::shard_status_words.entries().size() == 3);
  CHECK(journal::operation_kind_words.entries().size() == 9);
}
