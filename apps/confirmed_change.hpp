// What `shard remove`, `map drop` and `mapping remove` share: a change to the catalog that an
// operator confirms (shardctl(1): the confirmation is asked on a TTY).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "catalog/catalog.hpp"
#include "cli/context.hpp"

namespace shardctl::apps {

// How a change is reported: the JSON value under its verb ({"removed": ...}) and the text line.
struct Told {
  nlohmann::json json;
  std::string text;
};

// `change(store)` runs first on a store that writes nothing: every check, so nobody is asked to
// confirm a command that fails. A dry run reports it (`tell(true)`) and stops; a refused
// confirmation (`question()`, asked once the checks passed) changes nothing ("nothing <past>");
// else it runs for real and `tell(false)` reports it. `past` is the verb's past tense, the JSON
// key: "removed", "dropped".
template <class Change, class Question, class Tell>
void confirmed_change(cli::Context& ctx, const std::string& past, Change change, Question question, Tell tell) {
  auto report = [&](const Told& told) {
    if (ctx.json()) return ctx.print_json({{past, told.json}});
    ctx.out() << told.text << '\n';
  };
  catalog::Store preview(ctx.catalog(), catalog::Writes::preview);
  change(preview);
  if (ctx.dry_run()) return report(tell(true));
  if (!ctx.confirm(question())) return ctx.note("nothing " + past);
  catalog::Store store(ctx.catalog());
  change(store);
  report(tell(false));
}

}  // namespace shardctl::apps
