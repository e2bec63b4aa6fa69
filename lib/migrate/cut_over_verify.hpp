// The verify of an online batch, done so that the cut-over's window (writers of the batch's
// keys wait through it) compares only what changed since the batch was compared as a whole.
//
// Ahead of the window, while the stream runs and writers go on (compare_ahead):
//   1. the target records, from now on, the key of every row its stream changes
//      (shardside/stream_keys.hpp: a trigger enabled REPLICA, which the apply worker fires);
//   2. a REPEATABLE READ snapshot S of the source is taken; the target applies the stream up to
//      a source position after every commit S sees;
//   3. a REPEATABLE READ snapshot T of the target is taken, and with it the keys recorded so far,
//      K: every key whose rows changed on the source after S is in K, since the stream applied
//      that change after step 1. Outside K, T holds exactly what S holds;
//   4. both servers digest the batch's rows whose key is not in K, at once, in S and in T, and
//      the digests must be equal (else the verify fails, exit 70, nothing deleted). T stays open.
// In the window (compare_changed), once the target applied everything the source committed
// before its writers were held: the keys recorded by then, K' (K and the keys changed since),
// and both servers digest the rows of the keys in K' as they are now: equal, or the verify
// fails. Every row of the batch was compared: those of keys outside K' in step 4 (and no stream
// change touched them since), the others now.
//
// The purge deletes only rows of that digest: the source's whole batch at the flip is
//   D(not K, in S) - D(K' and not K, in T) + D(K', now on the source)
// (digests are exact sums: shardio::subtract_value_digests). Outside K, T is S, so the middle
// term, read in the snapshot T still open, is the source's rows of K' \ K as S had them.
//
// The window's cost is then the keys the writers touched since step 3, not the batch's size:
// predicted_ms() says what comparing them would take at the rate measured in earlier windows,
// for the runner to start a cut-over only when it fits (runner_online.cpp), and compare the batch
// ahead again (a new K, smaller) when it does not. Both servers must digest alike (the same
// server encoding; runner.hpp, servers_digest_alike); where they do not, the window verifies the
// whole batch as before.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "migrate/guard.hpp"
#include "migrate/server_digest.hpp"
#include "shardio/raw_conn.hpp"

namespace shardctl::migrate {

// One moving table as both servers digest its batch:
//   head + <the side's range filter> + " AND " + <a key predicate> + tail
// yields "TAG:COUNT:SUM" (server_digest.hpp) over the batch's rows that the predicate keeps.
struct CutOverTable {
  std::string name;      // as in the catalog: the verified JSON's key
  std::string quoted;    // "schema"."table": the table as the stream's record names it
  std::string key;       // the key column, quoted
  std::string key_type;  // its type (format_type), which recorded keys (text) are cast to
  std::string head;      // "SELECT <aggregate> FROM (SELECT <columns> FROM <table> WHERE "
  std::string source_filter, target_filter;
  std::string tail;      // ") <alias>"
  ServerDigest how;
};

// A table whose digests differ between the servers.
struct DigestDifference {
  std::size_t table = 0;  // index into the tables
  std::string on_source, on_target;
};

using SessionFactory = std::function<std::unique_ptr<shardio::RawConn>()>;

class CutOverVerify {
 public:
  CutOverVerify(std::vector<CutOverTable> tables, std::vector<GuardedTable> guarded, std::string stream, SessionFactory source_session,
                SessionFactory target_session);
  ~CutOverVerify();
  CutOverVerify(const CutOverVerify&) = delete;
  CutOverVerify& operator=(const CutOverVerify&) = delete;

  enum class Ahead { compared, behind };
  // Steps 1-4 above. `source` and `target` are the runner's sessions (a WAL position is marked
  // on the source; the record is started on the target). `behind`: the target did not apply
  // the source's position within `apply_wait`; nothing was compared (try again after catch-up).
  Ahead compare_ahead(shardio::RawConn& source, shardio::RawConn& target, std::chrono::milliseconds apply_wait,
                      std::optional<DigestDifference>& difference);
  // Whether compare_ahead compared the batch and its snapshot T is still open.
  bool compared() const noexcept { return held_ != nullptr; }
  // The keys recorded so far (K' if the window began now).
  std::int64_t keys_now(shardio::RawConn& target) const;
  // What comparing that many keys' rows would take in the window, in ms, at the rate earlier
  // windows of this batch measured (a first guess before any).
  double predicted_ms(std::int64_t keys) const noexcept;

  struct Window {
    std::optional<DigestDifference> difference;
    nlohmann::json verified;  // table name -> "TAG:COUNT:SUM" of the source's batch now
    std::int64_t keys = 0;    // K'
  };
  // In the window, on the runner's sessions (writers held, the target caught up).
  Window compare_changed(shardio::RawConn& source, shardio::RawConn& target);
  // Closes the snapshot T (compare_ahead must run again before compare_changed).
  void forget() noexcept;

  // The first guess of a key's cost in the window, before one was measured: a few index lookups
  // on each server. Measured rates replace it.
  static constexpr double first_guess_ms_per_key = 0.05;
  // A rate is measured over at least this many keys.
  static constexpr std::size_t min_keys_measured = 20;

 private:
  std::string digest_sql(const CutOverTable& t, bool on_source, const std::string& predicate) const;
  std::vector<std::string> digest_each(shardio::RawConn& conn, bool on_source, const std::vector<std::string>& predicates,
                                       const std::vector<std::vector<std::string>>& params) const;
  void measure_key_rate(shardio::RawConn& snapshot);

  std::vector<CutOverTable> tables_;
  std::vector<GuardedTable> guarded_;
  std::string stream_;
  SessionFactory source_session_, target_session_;
  std::unique_ptr<shardio::RawConn> held_;       // the target's session in snapshot T
  std::vector<std::vector<std::string>> keys_;   // per table: K, as text
  std::vector<std::string> unchanged_;           // per table: D(not K), the same in S and T ("COUNT:SUM")
  double ms_per_key_ = first_guess_ms_per_key;
};

}  // namespace shardctl::migrate
