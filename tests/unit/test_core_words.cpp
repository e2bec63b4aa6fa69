// core/words.hpp: one table per enum gives its words both ways.
#include <doctest/doctest.h>

#include <array>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

#include "archive/run_journal.hpp"
#include "catalog/catalog.hpp"
#include "check/finding.hpp"
#include "core/words.hpp"
#include "journal/journal.hpp"
#include "migrate/batch_step.hpp"
#include "planner/planner.hpp"
#include "routing/key.hpp"
#include "schema/states.hpp"
#include "shardside/guard_state.hpp"
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

// An enum whose namespace names its table (core/words.hpp): the generic to_text, from_text,
// read, parse and operator<< come from the table alone.
namespace words_template_test {

enum class Tide { low, rising, high };
inline constexpr auto tide_words =
    words<Tide>({{Tide::low, "low"}, {Tide::rising, "rising"}, {Tide::high, "high"}}).otherwise("slack").stored_as(
        "tide", "the harbour log");
constexpr const auto& words_of(Tide) noexcept { return tide_words; }
using shardctl::operator<<;
using shardctl::to_text;

enum class Unworded { a, b };

}  // namespace words_template_test

// A namespace with its own to_text and operator<<: they hide shardctl's from ordinary lookup, so
// what finds the generic ones here is argument-dependent lookup through the enum's namespace.
namespace words_elsewhere {

struct Other {};
[[maybe_unused]] std::string_view to_text(Other) { return "other"; }
[[maybe_unused]] std::ostream& operator<<(std::ostream& out, Other) { return out << "other"; }

std::string streamed_tide(words_template_test::Tide tide) {
  std::ostringstream out;
  out << tide;
  return out.str();
}
std::string_view tide_text(words_template_test::Tide tide) { return to_text(tide); }

}  // namespace words_elsewhere

TEST_CASE("an enum with a table has to_text, from_text, read, parse and operator<<, found from any namespace") {
  using words_template_test::Tide;
  static_assert(has_words<Tide>);
  static_assert(!has_words<words_template_test::Unworded>);
  static_assert(!has_words<int>);
  static_assert(to_text(Tide::rising) == "rising");
  static_assert(from_text<Tide>("high") == Tide::high);
  static_assert(!from_text<Tide>("High"));
  CHECK(words_elsewhere::tide_text(Tide::low) == "low");
  CHECK(words_elsewhere::streamed_tide(Tide::high) == "high");
  CHECK(read_word<Tide>("rising") == Tide::rising);
  CHECK(read_word<Tide>("low", "tide", "the almanac") == Tide::low);
  CHECK(parse_word<Tide>("high", "tide") == Tide::high);
}

TEST_CASE("a value its table lacks prints as the table's fallback") {
  using words_template_test::Tide;
  constexpr auto out_of_range = static_cast<Tide>(9);
  static_assert(to_text(out_of_range) == "slack");
  CHECK(words_elsewhere::streamed_tide(out_of_range) == "slack");
  // Without otherwise(), nothing: catalog::ShardStatus has always printed "" for one.
  static_assert(to_text(static_cast<catalog::ShardStatus>(9)).empty());
}

TEST_CASE("an unknown word: read is an internal error naming it and where, parse a usage error listing the words") {
  using words_template_test::Tide;
  test::check_unknown_words([](std::string_view word) { return read_word<Tide>(word); }, {"ebb", "", "Low", "low "},
                            "unknown tide '{}' in the harbour log");
  test::check_unknown_words([](std::string_view word) { return read_word<Tide>(word, "tide", "the almanac"); }, {"ebb"},
                            "unknown tide '{}' in the almanac");
  test::check_refused_words([](std::string_view word) { return parse_word<Tide>(word, "tide"); }, {"ebb", "slack"},
                            ErrorKind::usage, "unknown tide '{}'", "use low, rising or high");
  test::check_refused_words([](std::string_view word) { return parse_word<routing::MapKind>(word); }, {"tree"},
                            ErrorKind::usage, "unknown map kind '{}'", "use list, range or hash");
}

namespace {

// Every value of E: its word reads back as itself (from_text, read, parse), and prints as it.
template <class E>
void check_round_trip() {
  static_assert(has_words<E>);
  for (E value : words_of(E{}).values()) {
    std::string word(to_text(value));
    INFO("the word '" << word << "'");
    CHECK_FALSE(word.empty());
    CHECK(from_text<E>(word) == value);
    CHECK(read_word<E>(word) == value);
    CHECK(parse_word<E>(word, "word") == value);
    std::ostringstream out;
    out << value;
    CHECK(out.str() == word);
  }
}

}  // namespace

TEST_CASE("every value of an enum reads back as itself and prints as its word") {
  check_round_trip<words_template_test::Tide>();
  check_round_trip<catalog::ShardStatus>();
  check_round_trip<catalog::MappingStatus>();
  check_round_trip<catalog::TableKind>();
  check_round_trip<journal::OperationStatus>();
  check_round_trip<journal::OperationKind>();
  check_round_trip<routing::KeyType>();
  check_round_trip<routing::MapKind>();
  check_round_trip<migrate::BatchStep>();
  check_round_trip<archive::ShardState>();
  check_round_trip<archive::BatchStep>();
  check_round_trip<shardside::GuardState>();
  check_round_trip<check::Kind>();
  check_round_trip<check::Status>();
  check_round_trip<planner::StepKind>();
  check_round_trip<schema::StatusState>();
}
