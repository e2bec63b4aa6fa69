// An operation's status and kind (journal/journal.hpp): the words of shardctl.operations (and of
// `op list`/JSON) read back as the same values, unknown words refused as internal errors naming
// them, and which statuses are over and which kinds are migrations.
#include <doctest/doctest.h>

#include "journal/journal.hpp"
#include "words_checks.hpp"

// Its own namespace: unit_tests is a unity build, and these names must not meet another file's.
namespace shardctl::test::journal_operation_words {

using journal::OperationKind;
using journal::OperationStatus;

TEST_CASE("operation statuses round-trip through the catalog's words") {
  check_column_words(journal::operation_status_words, read_as<journal::OperationStatus>,
                     {{OperationStatus::planned, "planned"}, {OperationStatus::running, "running"},
                      {OperationStatus::interrupted, "interrupted"}, {OperationStatus::paused, "paused"},
                      {OperationStatus::failed, "failed"}, {OperationStatus::cancelled, "cancelled"},
                      {OperationStatus::done, "done"}});
  CHECK(journal::is_over(OperationStatus::done));
  CHECK(journal::is_over(OperationStatus::cancelled));
  for (auto s : {OperationStatus::planned, OperationStatus::running, OperationStatus::interrupted, OperationStatus::paused,
                 OperationStatus::failed})
    CHECK_FALSE(journal::is_over(s));
}

TEST_CASE("operation kinds round-trip through the catalog's words") {
  const std::pair<OperationKind, const char*> words[] = {
      {OperationKind::split, "split"}, {OperationKind::merge, "merge"}, {OperationKind::move, "move"},
      {OperationKind::archive, "archive"}, {OperationKind::archive_restore, "archive-restore"},
      {OperationKind::check_quarantine, "check-quarantine"}, {OperationKind::check_delete, "check-delete"},
      {OperationKind::check_rehome, "check-rehome"}, {OperationKind::check_restore, "check-restore"}};
  check_column_words(journal::operation_kind_words, read_as<journal::OperationKind>, words);
  for (const auto& [kind, word] : words)
    CHECK(journal::is_migration(kind) == (kind == OperationKind::split || kind == OperationKind::merge ||
                                          kind == OperationKind::move));
}

TEST_CASE("an unknown operation status or kind from the catalog is an internal error naming it") {
  check_unknown_words(read_as<journal::OperationStatus>, {"finished"}, "unknown operation status '{}' in shardctl.operations");
  check_unknown_words(read_as<journal::OperationKind>, {"check-fix"}, "unknown operation kind '{}' in shardctl.operations");
}

}  // namespace shardctl::test::journal_operation_words
