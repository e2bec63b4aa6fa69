// shardctl move: move the mapping that routes one key (a list map's point, or the whole
// range of a range or hash map that holds the key) to another shard.
#include "cli/family.hpp"
#include "run_operation.hpp"

using namespace shardctl;

int main(int argc, char** argv) {
  cli::Family fam("move", "Move the mapping that routes a key to another shard");
  migrate::MoveRequest req;
  std::optional<int> batch_size;
  fam.app().add_option("--map", req.map, "Map of the key")->required()->type_name("MAP");
  fam.app().add_option("--key", req.key, "A key of the map's key type; its whole mapping moves")->required()->type_name("KEY");
  fam.app().add_option("--to", req.to, "Shard that receives the mapping")->required()->type_name("SHARD");
  apps::add_batch_size(fam.app(), batch_size);
  apps::RunFlags flags;
  flags.add_to(fam.app());

  fam.root_handler([&](cli::Context& ctx) {
    migrate::batch_sizing(batch_size, req.batch_size, req.batch_bytes);
    migrate::Engine engine(ctx.catalog(), flags.engine_options(ctx));
    apps::run_operation(ctx, engine, engine.plan_move(req));
  });
  return fam.main(argc, argv);
}
