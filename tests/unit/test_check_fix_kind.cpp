// Fix kinds (check/finding.hpp, check/journal.hpp): the words reports and JSON show for each, and
// the operation kind the journal records, check-<word>, as `op list` has always shown it. And the
// --fix modes (check/check.hpp) read from their words.
#include <doctest/doctest.h>

#include <string>

#include "check/check.hpp"
#include "check/finding.hpp"
#include "check/journal.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_check_fix_kind {

namespace check = shardctl::check;
namespace test = shardctl::test;

TEST_CASE("each fix kind has its word and is journaled as check-<word>") {
  const std::pair<check::FixKind, const char*> words[] = {{check::FixKind::quarantine, "quarantine"},
                                                          {check::FixKind::remove, "delete"},
                                                          {check::FixKind::rehome, "rehome"},
                                                          {check::FixKind::restore, "restore"}};
  for (const auto& [kind, word] : words) {
    CHECK(to_text(kind) == word);
    CHECK(shardctl::journal::to_text(check::fix_operation_kind(kind)) == "check-" + std::string(word));
  }
}

TEST_CASE("each --fix mode reads back from its word; an unknown word is a usage error naming the choices") {
  const std::pair<check::FixMode, const char*> words[] = {{check::FixMode::report, "report"},
                                                          {check::FixMode::quarantine, "quarantine"},
                                                          {check::FixMode::remove, "delete"},
                                                          {check::FixMode::rehome, "rehome"}};
  test::check_words(words, test::parse_as<check::FixMode>);
  test::check_refused_words(test::parse_as<check::FixMode>, {"remove", "Delete", ""}, shardctl::ErrorKind::usage,
                            "unknown --fix '{}'", "use report, quarantine, delete or rehome");
}

}  // namespace test_check_fix_kind
