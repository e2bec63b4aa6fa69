// An operation's status and kind (journal/journal.hpp): the words of shardctl.operations (and of
// `op list`/JSON) read back as the same values, unknown words refused as internal errors naming
// them, and which statuses are over and which kinds are migrations.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "core/error.hpp"
#include "journal/journal.hpp"

// Its own namespace: unit_tests is a unity build, and these aliases must not meet another file's.
namespace test_journal_operation_words {

namespace journal = shardctl::journal;
using journal::OperationKind;
using journal::OperationStatus;

TEST_CASE("operation statuses round-trip through the catalog's words") {
  const std::pair<OperationStatus, const char*> words[] = {
      {OperationStatus::planned, "planned"}, {OperationStatus::running, "running"},
      {OperationStatus::interrupted, "interrupted"}, {OperationStatus::paused, "paused"},
      {OperationStatus::failed, "failed"}, {OperationStatus::cancelled, "cancelled"},
      {OperationStatus::done, "done"}};
  for (const auto& [status, word] : words) {
    CHECK(journal::to_text(status) == word);
    CHECK(journal::operation_status_from_text(word) == status);
    std::ostringstream out;
    out << status;
    CHECK(out.str() == word);
  }
  CHECK(journal::is_over(OperationStatus::done));
  CHECK(journal::is_over(OperationStatus::cancelled));
  for (auto s : {OperationStatus::planned, OperationStatus::running, OperationStatus::interrupted, OperationStatus::paused,
                 OperationStatus::failed})
    CHECK_FALSE(journal::is_over(s));
}

TEST_CASE("operation kinds round-trip through the catalog's words") {
  const std::pair<OperationKind, const char*> words[] = {
      {OperationKind::split, "split"},
      {OperationKind::merge, "merge"},
      {OperationKind::move, "move"},
      {OperationKind::archive, "archive"},
      {OperationKind::archive_restore, "archive-restore"},
      {OperationKind::check_quarantine, "check-quarantine"},
      {OperationKind::check_delete, "check-delete"},
      {OperationKind::check_rehome, "check-rehome"},
      {OperationKind::check_restore, "check-restore"}};
  for (const auto& [kind, word] : words) {
    CHECK(journal::to_text(kind) == word);
    CHECK(journal::operation_kind_from_text(word) == kind);
    CHECK(journal::is_migration(kind) == (kind == OperationKind::split || kind == OperationKind::merge ||
                                          kind == OperationKind::move));
  }
}

TEST_CASE("an unknown operation status or kind from the catalog is an internal error naming it") {
  try {
    journal::operation_status_from_text("finished");
    FAIL("accepted a status");
  } catch (const shardctl::Error& e) {
    CHECK(e.kind() == shardctl::ErrorKind::internal);
    CHECK(std::string(e.what()) == "unknown operation status 'finished' in shardctl.operations");
  }
  try {
    journal::operation_kind_from_text("check-fix");
    FAIL("accepted a kind");
  } catch (const shardctl::Error& e) {
    CHECK(e.kind() == shardctl::ErrorKind::internal);
    CHECK(std::string(e.what()) == "unknown operation kind 'check-fix' in shardctl.operations");
  }
}

}  // namespace test_journal_operation_words
