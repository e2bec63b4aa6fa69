// `shardctl __complete maps|shards|ops` (hidden): the names shell completion offers, one per
// line, read from the catalog when one is reachable within a short timeout. Completion must
// never hang a shell or print an error into it: any failure prints nothing.
#pragma once

namespace shardctl::apps {

// argv: the dispatcher's arguments (global options -c/--config/--catalog are honoured);
// `at` indexes "__complete". Returns the exit code: 0 with names printed, 1 without.
int complete_names(int argc, char** argv, int at);

}  // namespace shardctl::apps
