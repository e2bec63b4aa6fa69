// The digests an online batch's cut-over has both servers compute over the batch's rows, and
// the purge computes again over the rows it deletes (runner_online.cpp, runner.cpp): one
// aggregate per table on each server, so no row crosses the network while writers wait.
// Journaled with the flip as "TAG:COUNT:SUM"; the tag says which aggregate, so a resumed purge
// recomputes exactly the one the cut-over compared:
//   values      the value digest (shardio/value_digest.hpp) of every column
//   values-nt   the same, numerics hashed by their text (the two servers' numeric probes differ)
//   md5         the md5 row checksum (shardio/row_checksum.hpp): a column the value digest
//               does not cover
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "migrate/operation.hpp"

namespace shardctl::migrate {

enum class ServerDigest { values, values_numeric_text, md5 };

// How a table's batch is digested on both servers: the value digest where every column has a
// value kind (`numerics_match`: both servers' numeric probes agree), else md5 row checksums.
ServerDigest server_digest_for(const PlannedTable& t, bool numerics_match);

// The select list that yields "TAG:COUNT:SUM" over FROM item shardio::row_alias, which must
// select the table's columns by name (a subquery or DELETE ... RETURNING of `t.columns`).
std::string server_digest_select(const PlannedTable& t, ServerDigest how);

// "TAG:COUNT:SUM": a value digest "COUNT:SUM" (shardio/value_digest.hpp) tagged as computed by `how`.
std::string tagged_digest(ServerDigest how, std::string_view count_sum);

// "COUNT:SUM" of a "TAG:COUNT:SUM" digest (what shardio::add_value_digests adds up).
std::string_view untagged(std::string_view tagged);

// The rows a journaled digest counts: "COUNT:..." (a CopyDigest, an untagged md5 sum of older
// runs) or "TAG:COUNT:SUM".
std::int64_t journaled_rows(std::string_view digest);

// The key of the offline flip's journal (table -> CopyDigest of the stream) under which the
// verify leaves, per table, the tagged value digest the source's server computes alike
// (runner.hpp: source_digest_like_stream): the purge compares the rows it deletes with it on the
// server. A key no table has: a table's is qualified (schema.table).
inline constexpr const char* journaled_server_digests = "server";

// The aggregate a journaled digest was computed with; none for other formats (a CopyDigest,
// or the untagged "COUNT:SUM" of older runs).
std::optional<ServerDigest> server_digest_of(std::string_view journaled);

}  // namespace shardctl::migrate
