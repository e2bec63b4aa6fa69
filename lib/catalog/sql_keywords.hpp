// SQL keywords that PostgreSQL's quote_ident() quotes (every category but unreserved).
#pragma once

#include <string_view>

namespace shardctl::catalog {

// True when `word` (lower case) is a PostgreSQL 15 keyword that is not unreserved, so a bare
// name spelled like it would not parse everywhere.
bool is_quoted_keyword(std::string_view word);

}  // namespace shardctl::catalog
