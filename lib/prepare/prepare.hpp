// `shard prepare`: installs or upgrades what shardctl keeps on a shard (lib/shardside: the write
// guard's schema, table and functions, which applications' route checks also use), before any
// operation needs them (man/shardctl-shard.1, PREPARE). One transaction per shard, under the
// shard-side lock every guard change takes, so it never races a move's guard install.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/words.hpp"
#include "fanout/fanout.hpp"

namespace shardctl::prepare {

// What a shard needed: nothing (its objects are this version's), a first install, or an upgrade
// of objects another shardctl version installed.
enum class Change { current, installed, upgraded };
inline constexpr auto change_words =
    words<Change>({{Change::current, "current"}, {Change::installed, "installed"}, {Change::upgraded, "upgraded"}})
        .otherwise("current");
constexpr const auto& words_of(Change) noexcept { return change_words; }
using shardctl::operator<<;
using shardctl::to_text;

// Prepares one shard through `dsn` (no password: libpq finds it), connecting for at most
// `connect_timeout` seconds; `preview` only reads what it would change. `role` names the
// database in errors ("shard shard_1"). Unreachable: an unavailable Error (69).
Change prepare_shard(const std::string& dsn, const std::string& role, bool preview, int connect_timeout = 5);

struct Result {
  fanout::Outcome outcome;  // ok, unreachable or failed
  Change change = Change::current;  // when ok
};

// Every target, `parallel` at once; one result per target, in target order.
std::vector<Result> prepare_shards(const std::vector<fanout::Target>& targets, int parallel, bool preview,
                                   int connect_timeout = 5);

}  // namespace shardctl::prepare
