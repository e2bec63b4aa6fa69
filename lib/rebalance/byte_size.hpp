// Byte sizes on the command line (--max-bytes): "123", "500M", "10GB", "1.5TiB".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace shardctl::rebalance {

// Units are powers of 1024 whichever way they are written: k/K/KB/KiB, M/MB/MiB, G/GB/GiB,
// T/TB/TiB; no unit or B is bytes. nullopt for anything else, or a negative size.
std::optional<std::int64_t> parse_byte_size(const std::string& text);

}  // namespace shardctl::rebalance
