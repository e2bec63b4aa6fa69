// What two copies of a reference table differ by, and which copy is the source of truth when no
// shard is named: pure code over the digests and row hashes the servers computed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shardctl::refdata {

// The digest of a set of rows: a chunk's, or a whole copy's.
struct ChunkDigest {
  std::int64_t rows = 0;
  std::string sum;  // exact decimal sum of the chunk's row hashes
  bool operator==(const ChunkDigest&) const = default;
};
// chunk number -> digest, for the non-empty chunks of one copy.
using ChunkDigests = std::map<std::int64_t, ChunkDigest>;

// The digest of the whole copy a copy's chunk digests were taken of: what whole_digest_sql
// gives for it (the counts and the exact sums added).
ChunkDigest total(const ChunkDigests& chunks);

// The chunks whose digests differ between two copies (a chunk empty in one counts), ascending.
std::vector<std::int64_t> differing_chunks(const ChunkDigests& a, const ChunkDigests& b);

// One row of a differing chunk: its identity (key text, or row hash without a key) and hash.
struct RowHash {
  std::string key;
  std::string hash;
};

// How a copy differs from the source in the rows of some chunks. Keys are sorted; without a
// primary key a row's key is its hash and `changed` stays empty (a changed row there is one
// missing and one extra).
struct RowDiff {
  std::vector<std::string> missing;  // in the source, not in the copy
  std::vector<std::string> extra;    // in the copy, not in the source
  std::vector<std::string> changed;  // same key, other values
  std::int64_t total() const noexcept {
    return static_cast<std::int64_t>(missing.size() + extra.size() + changed.size());
  }
};
// `by_row`: rows identified by their hash, compared as multisets (a duplicate is an extra row).
RowDiff classify(const std::vector<RowHash>& source, const std::vector<RowHash>& copy, bool by_row);

// The copy the others are compared with when no source is named: the one most copies agree
// with, by their whole-table digests. `groups` are indexes of copies with equal digests, largest
// group first (then by the lowest index); a tie when two groups share the largest size.
struct Majority {
  std::vector<std::vector<std::size_t>> groups;
  bool tie = false;
  const std::vector<std::size_t>& winners() const { return groups.front(); }
};
// `copies` must not be empty.
Majority majority(const std::vector<ChunkDigest>& copies);

}  // namespace shardctl::refdata
