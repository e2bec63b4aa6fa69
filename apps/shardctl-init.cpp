// shardctl init: create or upgrade the catalog schema.
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "cli/family.hpp"

using namespace shardctl;

namespace {
// What init did to the catalog, in text.
void print_status(cli::Context& ctx, const catalog::InitResult& result) {
  if (result.previous_version == result.version) {
    ctx.out() << "catalog is up to date (schema version " << result.version << ")\n";
    return;
  }
  if (ctx.dry_run())
    ctx.out() << "would " << (result.previous_version == 0 ? "create" : "upgrade") << " the catalog"
              << (result.previous_version == 0 ? "" : " from schema version " + std::to_string(result.previous_version))
              << " to schema version " << result.version << " in " << ctx.catalog().where() << '\n';
  else if (result.previous_version == 0)
    ctx.out() << "created catalog schema version " << result.version << " in " << ctx.catalog().where() << '\n';
  else
    ctx.out() << "upgraded catalog from schema version " << result.previous_version << " to "
              << result.version << '\n';
}
}  // namespace

int main(int argc, char** argv) {
  cli::Family fam("init", "Create or upgrade the catalog schema (idempotent)");
  std::optional<std::string> grant_role;
  fam.app()
      .add_option("--grant-routing", grant_role,
                  "Let ROLE call shardctl.route, map_snapshot and map_changes (and nothing else of the catalog)")
      ->type_name("ROLE");
  fam.root_handler([&](cli::Context& ctx) {
    // An unknown role is refused before anything changes.
    if (grant_role) catalog::grant_routing(ctx.catalog(), *grant_role, catalog::Writes::preview);
    auto result = catalog::init_catalog(ctx.catalog(), catalog::writes_for(ctx.dry_run()));
    // The role's grants after the catalog exists (in a dry run of a catalog still to be created,
    // the statements are printed without asking the server about the functions).
    std::vector<std::string> grants;
    if (grant_role) grants = catalog::grant_routing(ctx.catalog(), *grant_role, catalog::writes_for(ctx.dry_run()));
    // Never the password itself: the shard's name and where the credential belongs.
    for (const auto& name : result.passwords_removed)
      ctx.warn(std::string(ctx.dry_run() ? "would remove" : "removed") + " the password from the stored DSN of shard " + name +
               "; give it to libpq in ~/.pgpass, PGPASSFILE, a service file or PGPASSWORD");
    if (ctx.json()) {
      ctx.print_json({{"previous_version", result.previous_version},
                      {"version", result.version},
                      {"changed", result.changed()},
                      {"passwords_removed", result.passwords_removed},
                      {"catalog", ctx.catalog().where()},
                      {"grants", grants}});
      return;
    }
    print_status(ctx, result);
    for (const auto& g : grants) ctx.out() << (ctx.dry_run() ? "would run: " : "ran: ") << g << ";\n";
  });
  return fam.main(argc, argv);
}
