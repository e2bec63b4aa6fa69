// Fix kinds (check/finding.hpp, check/journal.hpp): the words reports and JSON show for each, and
// the operation kind the journal records, check-<word>, as `op list` has always shown it.
#include <doctest/doctest.h>

#include <string>

#include "check/finding.hpp"
#include "check/journal.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_check_fix_kind {

namespace check = shardctl::check;

TEST_CASE("each fix kind has its word and is journaled as check-<word>") {
  const std::pair<check::FixKind, const char*> words[] = {{check::FixKind::quarantine, "quarantine"},
                                                          {check::FixKind::remove, "delete"},
                                                          {check::FixKind::rehome, "rehome"},
                                                          {check::FixKind::restore, "restore"}};
  for (const auto& [kind, word] : words) {
    CHECK(check::fix_kind_name(kind) == word);
    CHECK(shardctl::journal::to_text(check::fix_operation_kind(kind)) == "check-" + std::string(word));
  }
}

}  // namespace test_check_fix_kind
