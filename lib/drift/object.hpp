// The unit `schema drift` compares: one database object with a canonical definition text.
#pragma once

#include <string>
#include <vector>

namespace shardctl::drift {

// `key` is "KIND:NAME" with names quoted as PostgreSQL quotes them (quote_ident) and
// schema-qualified: "table:public.orders", "column:public.orders.total",
// "index:public.orders_pkey", "constraint:public.orders.orders_pkey",
// "trigger:public.orders.audit", "function:public.f(integer, text)", "sequence:public.s",
// "view:public.v", "type:public.mood", "schema:public", "extension:pgcrypto".
// `parent` is the key of the table or view a column, index, constraint or trigger belongs to
// (empty otherwise): a table missing on a shard is one difference, not one per column.
struct Object {
  std::string key;
  std::string parent;
  std::string definition;
  // Set when `definition` is a stand-in that is cheap to read but not meant for people (a
  // CHECK's stored expression tree): the object's oid, so the definition can be deparsed
  // where shards differ.
  std::string deparse_oid{};
};

// The kind and the name of a key ("column", "public.orders.total").
std::string kind_of(const std::string& key);
std::string name_of(const std::string& key);

}  // namespace shardctl::drift
