// shardctl merge: move every mapping (or part of one) inside a range onto one shard.
#include "cli/family.hpp"
#include "run_operation.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("merge", "Move every mapping inside a range onto one shard");
  migrate::MergeRequest req;
  fam.app().add_option("--map", req.map, "Map whose ranges merge")->required()->type_name("MAP");
  fam.app().add_option("--range", req.range, "Half-open key range LOW..HIGH (LOW.. and ..HIGH are unbounded)")
      ->required()
      ->type_name("LOW..HIGH");
  fam.app().add_option("--into", req.into, "Shard that receives every mapping in the range")->required()->type_name("SHARD");
  return apps::migration_main(fam, argc, argv, req,
                              [](migrate::Engine& engine, const auto& r) { return engine.plan_merge(r); });
}
