// The value digest of a set of rows: the row count and the exact sum of a 64-bit hash per row,
// which the server computes in SQL over stored rows and shardctl computes over a binary COPY
// stream of the same rows. A migration's verify compares the digest shardctl took of the
// source's stream as it loaded the target with the target's own sum, one aggregate per table:
// no row is sent back, so verifying costs a scan of the batch, not a second copy of it.
//
// A row's hash is the XOR over its columns of PostgreSQL's seeded extended hash of each value
// (seed = column position, so equal values in different columns do not cancel; NULL = 0):
//   smallint, integer, bigint       hashint2/4/8extended
//   boolean                         hashint4extended(v::int): what the type's own hash gives
//   date                            hash_record_extended(ROW(v)): the type's own hash of its
//                                   integer representation (days; infinite dates too)
//   timestamp                       timestamp_hash_extended(v): its integer representation
//   timestamptz                     timestamp_hash_extended(v AT TIME ZONE INTERVAL '00:00'):
//                                   the same integer, whatever the session's time zone; no
//                                   record built per row (a third of the cost of ROW(v))
//   text, varchar                   hashtextextended(v COLLATE "C"): the value's bytes
//   uuid                            uuid_hash_extended
//   numeric                         hash_numeric_extended(v) XOR hashint4extended(2 * scale(v) +
//                                   (v < 0)): its digits and weight, sign and display scale, which
//                                   together fix its text; NaN and infinities by their text.
//                                   The digits hash over the server's memory order, so a runner
//                                   first checks that the client computes the server's value
//                                   (numeric_probe_sql) and falls back to
//   numeric_text                    hashtextextended(v::text): its exact text (4x the cost)
//   numeric(p,s)                    hash_numeric_extended(v, seed + 2^32 where v < 0): digits,
//     (numeric_fixed)               weight and sign. Its type fixes the display scale of every
//                                   value (the server rounds each to s on the way in), and a move
//                                   checks at plan time that both shards declare the same type;
//                                   NaN hashes to its seed (no infinities in such a column).
//                                   Half the cost of the unconstrained numeric's term; the same
//                                   byte-order probe and text fallback apply.
// A NOT NULL column's hash is not wrapped in coalesce() (a NULL the target had anyway would
// drop its row from the sum, and the comparison fails).
// What it detects: any changed, missing, extra or duplicated row, but for a 2^-64 chance per
// difference; every byte of every value enters the hash (a numeric as the value its text shows). It
// does not resist someone forging rows. A table with a column of another type (floats, json,
// arrays, domains, ...) is verified by reading its rows back instead (CopyDigest).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl::shardio {

enum class ValueKind { int2, int4, int8, boolean, date, timestamp, timestamptz, text, uuid, numeric, numeric_fixed, numeric_text };

// The kind of a column of format_type() `type` ("integer", "character varying(20)", ...),
// or none when the value digest does not cover it.
std::optional<ValueKind> value_kind(std::string_view type);

struct ValueColumn {
  std::string quoted;  // the column, quoted
  ValueKind kind;
  bool not_null = false;
};

// A query whose single value the client's numeric hash must reproduce (numeric_probe_matches)
// before ValueKind::numeric is used against that server.
extern const char* const numeric_probe_sql;
bool numeric_probe_matches(std::string_view server_value);

// The SQL select list that yields the digest text "COUNT:SUM" of the FROM clause's rows.
std::string value_digest_sql(const std::vector<ValueColumn>& columns);
// One column's term of the row hash above (`position`: its 0-based position, the seed's source),
// NULL as 0 unless the column is NOT NULL; the row hash is the XOR (#) of its columns' terms.
std::string value_hash_sql(const ValueColumn& column, std::size_t position);

// The hash one binary COPY field contributes (`position`: the column's 0-based position).
std::uint64_t value_hash(ValueKind kind, std::string_view field, std::size_t position);

// What numeric_out prints for a numeric in its binary send format (for the numeric hash).
std::string numeric_text(std::string_view binary);

// The digest of the sum of two sets of rows ("COUNT:SUM" each).
std::string add_value_digests(const std::string& a, const std::string& b);
// "COUNT:SUM" of the rows of `a` that are not in `b`, where `b` digests a subset of `a`'s rows
// (sums are exact integers, so a digest of a set minus one of its subset is the digest of the rest).
std::string subtract_value_digests(const std::string& a, const std::string& b);

// Running count and exact sum of row hashes.
class ValueSum {
 public:
  void add(std::int64_t row_hash) noexcept {
    ++rows_;
    sum_ += row_hash;
  }
  void merge(const ValueSum& other) noexcept {
    rows_ += other.rows_;
    sum_ += other.sum_;
  }
  std::int64_t rows() const noexcept { return rows_; }
  std::string text() const;

 private:
  std::int64_t rows_ = 0;
  __int128 sum_ = 0;  // 2^63 rows of |hash| < 2^63 cannot overflow it
};

}  // namespace shardctl::shardio
