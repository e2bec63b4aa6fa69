// shardctl move: move the mapping that routes one key (a list map's point, or the whole
// range of a range or hash map that holds the key) to another shard.
#include "cli/family.hpp"
#include "run_operation.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("move", "Move the mapping that routes a key to another shard");
  migrate::MoveRequest req;
  fam.app().add_option("--map", req.map, "Map of the key")->required()->type_name("MAP");
  fam.app().add_option("--key", req.key, "A key of the map's key type; its whole mapping moves")->required()->type_name("KEY");
  fam.app().add_option("--to", req.to, "Shard that receives the mapping")->required()->type_name("SHARD");
  return apps::migration_main(fam, argc, argv, req,
                              [](migrate::Engine& engine, const auto& r) { return engine.plan_move(r); });
}
