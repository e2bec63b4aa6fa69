// The SQL fragments that tell live operations from finished ones (catalog/operation_sql.hpp)
// name exactly the statuses journal::is_over calls over, so a query and the code never disagree
// on whether an operation still owns its keys.
#include <doctest/doctest.h>

#include <string>

#include "catalog/operation_sql.hpp"
#include "journal/journal.hpp"

namespace test_journal_live_sql {

namespace catalog = shardctl::catalog;
namespace journal = shardctl::journal;

TEST_CASE("over_statuses lists exactly the statuses is_over calls over") {
  std::string listed(catalog::over_statuses);
  int over = 0;
  for (const auto& [status, word] : journal::operation_status_words.entries()) {
    bool in_list = listed.find("'" + std::string(word) + "'") != std::string::npos;
    CHECK_MESSAGE(in_list == journal::is_over(status), word);
    over += journal::is_over(status) ? 1 : 0;
  }
  CHECK(over == 2);
}

TEST_CASE("the fragments qualify the column with the alias given") {
  CHECK(catalog::operation_is_live() == "status NOT IN ('done', 'cancelled')");
  CHECK(catalog::operation_is_live("o") == "o.status NOT IN ('done', 'cancelled')");
  CHECK(catalog::operation_is_over("o") == "o.status IN ('done', 'cancelled')");
}

}  // namespace test_journal_live_sql
