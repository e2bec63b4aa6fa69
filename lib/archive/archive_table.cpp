#include "archive/archive_table.hpp"

#include "catalog/names.hpp"
#include "core/error.hpp"

namespace shardctl::archive {
using catalog::quote_ident;

std::vector<std::string> archive_table_ddl(const std::string& schema, const std::string& table,
                                           const std::vector<shardio::Column>& source) {
  std::string qualified = quote_ident(schema);
  qualified += '.';
  qualified += quote_ident(table);
  std::string create = "CREATE TABLE IF NOT EXISTS ";
  create += qualified;
  create += " (";
  for (const auto& c : source) {
    create += quote_ident(c.name);
    create += ' ';
    create += c.type;
    create += ", ";
  }
  create += quote_ident(source_shard_column);
  create += " text NOT NULL, ";
  create += quote_ident(archived_at_column);
  create += " timestamptz NOT NULL)";
  std::string index = "CREATE INDEX IF NOT EXISTS ";
  index += quote_ident(table.substr(0, 40) + "_shardctl_batch");
  index += " ON ";
  index += qualified;
  index += " (";
  index += quote_ident(source_shard_column);
  index += ", ";
  index += quote_ident(archived_at_column);
  index += ')';
  return {"CREATE SCHEMA IF NOT EXISTS " + quote_ident(schema), create, index};
}

std::string source_table_ddl(const std::string& schema, const std::string& table,
                             const std::vector<shardio::Column>& source) {
  std::string ddl = "CREATE TABLE ";
  ddl += quote_ident(schema);
  ddl += '.';
  ddl += quote_ident(table);
  ddl += " (";
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (i) ddl += ", ";
    ddl += quote_ident(source[i].name);
    ddl += ' ';
    ddl += source[i].type;
  }
  ddl += ')';
  return ddl;
}

void require_matching_columns(const std::vector<shardio::Column>& source, const std::vector<shardio::Column>& dest,
                              const std::string& shown) {
  auto expected = source;
  expected.push_back({source_shard_column, "text"});
  expected.push_back({archived_at_column, "timestamp with time zone"});
  const std::string hint = "an archive table holds the source's columns in order, then source_shard and archived_at; "
                           "rename the old archive table or archive to another database";
  for (std::size_t i = 0; i < std::max(expected.size(), dest.size()); ++i) {
    if (i >= dest.size())
      throw usage_error("the archive table " + shown + " lacks column " + catalog::display_ident(expected[i].name), hint);
    if (i >= expected.size())
      throw usage_error("the archive table " + shown + " has an extra column " + catalog::display_ident(dest[i].name),
                        hint);
    if (dest[i].name != expected[i].name || dest[i].type != expected[i].type)
      throw usage_error("the archive table " + shown + " has column " + catalog::display_ident(dest[i].name) + " " +
                            dest[i].type + " where " + catalog::display_ident(expected[i].name) + " " +
                            expected[i].type + " belongs",
                        hint);
  }
}

}  // namespace shardctl::archive
