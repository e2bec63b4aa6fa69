#include "check/catalog_view.hpp"

#include "catalog/operation_sql.hpp"

namespace shardctl::check {

CatalogViews::CatalogViews(pg::Connection& catalog, std::string since) : catalog_(catalog), since_(std::move(since)) {}

std::string CatalogViews::token() {
  // The same operations load_fleet reads (live, or touched since the check began), each with
  // its last change; the maps' versions (a mapping added, changed or removed, a shard holding
  // one changed); the declared tables and xrefs whole (a handful of rows).
  std::string from = since_.empty() ? "infinity" : since_;
  std::string out;
  catalog_.read([&](pqxx::work& tx) {
    auto r = tx.exec_params1(
        "SELECT (SELECT coalesce(string_agg(m.map_id || ':' || m.version, ',' ORDER BY m.map_id), '') FROM shardctl.maps m), "
        "(SELECT coalesce(string_agg(o.op_id || ':' || o.status || ':' || o.updated_at || ':' || "
        "coalesce(o.finished_at::text, ''), ',' ORDER BY o.op_id), '') FROM shardctl.operations o WHERE " +
            catalog::operation_is_live("o") +
            " OR o.updated_at >= $1::timestamptz OR o.created_at >= $1::timestamptz OR o.finished_at >= $1::timestamptz), "
            "(SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t.table_id), '')) FROM shardctl.tables t), "
            "(SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x.xref_id), '')) FROM shardctl.xrefs x)",
        from);
    for (int i = 0; i < 4; ++i) out += r[i].as<std::string>() + '\n';
  });
  return out;
}

std::shared_ptr<const Fleet> CatalogViews::current() {
  std::lock_guard lock(mutex_);
  // The token is read before the view: a change between the two makes the next token differ,
  // so a view is never kept under a token older than itself.
  auto now = token();
  if (view_ && now == token_) return view_;
  view_ = std::make_shared<const Fleet>(load_fleet(catalog_, since_));
  token_ = std::move(now);
  ++reads_;
  return view_;
}

Fleet CatalogViews::load() {
  std::lock_guard lock(mutex_);
  ++reads_;
  return load_fleet(catalog_, since_);
}

void CatalogViews::with_catalog(const std::function<void(pg::Connection&)>& body) {
  std::lock_guard lock(mutex_);
  body(catalog_);
}

int CatalogViews::reads() const {
  std::lock_guard lock(mutex_);
  return reads_;
}

}  // namespace shardctl::check
