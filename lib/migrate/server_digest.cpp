#include "migrate/server_digest.hpp"

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "core/words.hpp"
#include "shardio/row_checksum.hpp"
#include "shardio/value_digest.hpp"

namespace shardctl::migrate {
namespace {

constexpr auto tags = words<ServerDigest>({
    {ServerDigest::values, "values"},
    {ServerDigest::values_numeric_text, "values-nt"},
    {ServerDigest::md5, "md5"},
});

// "'TAG:'", an SQL literal. (Built with append: GCC 12 misreads `"'" + std::string(view)` as
// an overflowing memcpy.)
std::string literal_tag(ServerDigest how) {
  std::string out = "'";
  out.append(tags.text(how)).append(":'");
  return out;
}

}  // namespace

ServerDigest server_digest_for(const PlannedTable& t, bool numerics_match) {
  if (value_kinds_of(t).empty()) return ServerDigest::md5;
  return numerics_match ? ServerDigest::values : ServerDigest::values_numeric_text;
}

std::string server_digest_select(const PlannedTable& t, ServerDigest how) {
  if (how == ServerDigest::md5) return literal_tag(how) + " || count(*) || ':' || " + shardio::row_hash_sum();
  auto kinds = value_kinds_of(t);
  std::vector<shardio::ValueColumn> cols;
  for (std::size_t c = 0; c < t.columns.size() && c < kinds.size(); ++c) {
    auto k = kinds[c];
    if (how == ServerDigest::values_numeric_text && (k == shardio::ValueKind::numeric || k == shardio::ValueKind::numeric_fixed))
      k = shardio::ValueKind::numeric_text;
    cols.push_back({catalog::quote_ident(t.columns[c]), k, c < t.not_null.size() && t.not_null[c]});
  }
  return literal_tag(how) + " || " + shardio::value_digest_sql(cols);
}

std::string tagged_digest(ServerDigest how, std::string_view count_sum) {
  std::string out(tags.text(how));
  return out.append(":").append(count_sum);
}

std::string_view untagged(std::string_view tagged) { return tagged.substr(tagged.find(':') + 1); }

std::int64_t journaled_rows(std::string_view digest) {
  if (server_digest_of(digest)) digest = untagged(digest);
  auto count = digest.substr(0, digest.find(':'));
  std::int64_t rows = 0;
  bool digits = !count.empty() && count.size() <= 18;
  for (char c : count) digits = digits && c >= '0' && c <= '9';
  if (!digits) throw internal_error("a journaled digest has no row count: " + std::string(digest));
  for (char c : count) rows = rows * 10 + (c - '0');
  return rows;
}

std::optional<ServerDigest> server_digest_of(std::string_view journaled) {
  auto colon = journaled.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return tags.find(journaled.substr(0, colon));
}

}  // namespace shardctl::migrate
