// shardctl xref: declare cross-shard references child(cols) -> parent(cols).
#include "catalog/catalog.hpp"
#include "catalog/json.hpp"
#include "catalog/names.hpp"
#include "cli/family.hpp"
#include "output/table.hpp"

using namespace shardctl;

namespace {

// Raw column names in display form: quoted only where SQL needs it.
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + catalog::display_ident(i);
  return out;
}

// The options main() defines; each command runs as one member function.
struct Commands {
  std::string name, child, parent, route, map;

  void add(cli::Context& ctx) {
    auto c = catalog::parse_table_columns(child);
    auto p = catalog::parse_table_columns(parent);
    auto route_column = catalog::parse_column_name(route);
    catalog::Xref x{name, c.table, c.columns, p.table, p.columns, route_column, map};
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    auto made = store.add_xref(x);
    if (ctx.json()) {
      auto doc = catalog::to_json(made);
      return ctx.print_json(doc);
    }
    if (ctx.dry_run())
      ctx.out() << "would declare xref " << made.name << ": " << made.child_table << "(" << join(made.child_columns)
                << ") -> " << made.parent_table << "(" << join(made.parent_columns) << ") routed by "
                << catalog::display_ident(made.route_column) << " on map " << made.map << '\n';
    else
      ctx.out() << "declared xref " << made.name << '\n';
  }

  void list(cli::Context& ctx) {
    catalog::Store store(ctx.catalog());
    auto xrefs = store.list_xrefs();
    if (ctx.json()) return ctx.print_json({{"xrefs", catalog::to_json(xrefs)}});
    output::TextTable t({"NAME", "CHILD", "PARENT", "ROUTE", "MAP"});
    for (const auto& x : xrefs)
      t.add_row({x.name, x.child_table + "(" + join(x.child_columns) + ")",
                 x.parent_table + "(" + join(x.parent_columns) + ")", catalog::display_ident(x.route_column), x.map});
    t.print(ctx.out());
  }

  void remove(cli::Context& ctx) {
    catalog::Store store(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    store.remove_xref(name);
    if (ctx.json()) {
      nlohmann::json doc = {{"removed", name}};
      return ctx.print_json(doc);
    }
    ctx.out() << (ctx.dry_run() ? "would remove xref " : "removed xref ") << name << '\n';
  }
};

}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("xref", "Declare cross-shard references (child -> parent)");
  Commands c;

  auto* add = fam.command("add", "Declare that child rows reference parent rows located through a map",
                          [&](cli::Context& ctx) { c.add(ctx); });
  add->add_option("NAME", c.name, "Xref name")->required();
  add->add_option("--child", c.child, "Child table and columns, e.g. 'order_lines(customer_id, order_id)'")
      ->required()
      ->type_name("T(COLS)");
  add->add_option("--parent", c.parent, "Parent table and columns, e.g. 'orders(customer_id, order_id)'")
      ->required()
      ->type_name("T(COLS)");
  add->add_option("--route", c.route, "Child column whose value the map routes to the parent's shard")
      ->required()
      ->type_name("COLUMN");
  add->add_option("--map", c.map, "The map that locates parent rows")->required()->type_name("MAP");

  fam.command("list", "List xrefs", [&](cli::Context& ctx) { c.list(ctx); });

  auto* remove = fam.command("remove", "Remove an xref", [&](cli::Context& ctx) { c.remove(ctx); });
  remove->add_option("NAME", c.name, "Xref name")->required();

  return fam.main(argc, argv);
}
