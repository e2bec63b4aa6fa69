// pg::sqlstate::connection_lost (pg/sqlstate.hpp): which SQLSTATEs mean the session is gone (69)
// rather than a failed statement.
#include <doctest/doctest.h>

#include "pg/sqlstate.hpp"

namespace test_pg_sqlstate {

namespace sqlstate = shardctl::pg::sqlstate;

TEST_CASE("class 08 and 57P are a lost session; other codes and near misses are not") {
  for (auto lost : {"08000", "08003", "08006", "08P01", "57P01", "57P02", "57P03", "57P04", "57P05"})
    CHECK_MESSAGE(sqlstate::connection_lost(lost), lost);
  for (auto kept : {"57014", "55P03", "40001", "42601", "00000", "0", "", "8000", "5P01"})
    CHECK_MESSAGE(!sqlstate::connection_lost(kept), kept);
}

}  // namespace test_pg_sqlstate
