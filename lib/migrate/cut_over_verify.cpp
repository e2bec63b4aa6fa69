#include "migrate/cut_over_verify.hpp"

#include <chrono>
#include <future>

#include "catalog/names.hpp"
#include "core/error.hpp"
#include "shardio/value_digest.hpp"
#include "shardside/replication.hpp"
#include "shardside/stream_keys.hpp"

namespace shardctl::migrate {
namespace {

using clock = std::chrono::steady_clock;

// The key column in a set of recorded keys ($N: their text[]), cast to the column's type so
// that the server looks them up by its index (or hashes the list, for NOT).
std::string key_in(const CutOverTable& t, int param) {
  return t.key + " = ANY ($" + std::to_string(param) + "::text[]::" + t.key_type + "[])";
}

const std::string zero = "0:0";

}  // namespace

CutOverVerify::CutOverVerify(std::vector<CutOverTable> tables, std::vector<GuardedTable> guarded, std::string stream,
                             SessionFactory source_session, SessionFactory target_session)
    : tables_(std::move(tables)),
      guarded_(std::move(guarded)),
      stream_(std::move(stream)),
      source_session_(std::move(source_session)),
      target_session_(std::move(target_session)) {}

CutOverVerify::~CutOverVerify() = default;

void CutOverVerify::forget() noexcept { held_.reset(); }

std::string CutOverVerify::digest_sql(const CutOverTable& t, bool on_source, const std::string& predicate) const {
  return t.head + (on_source ? t.source_filter : t.target_filter) + " AND " + predicate + t.tail;
}

// Each table's digest, "COUNT:SUM", on one session; a table whose predicate is empty keeps no
// row and is not read.
std::vector<std::string> CutOverVerify::digest_each(shardio::RawConn& conn, bool on_source, const std::vector<std::string>& predicates,
                                                    const std::vector<std::vector<std::string>>& params) const {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tables_.size(); ++i)
    out.push_back(predicates[i].empty() ? zero
                                        : std::string(untagged(conn.query(digest_sql(tables_[i], on_source, predicates[i]), params[i])[0][0])));
  return out;
}

CutOverVerify::Ahead CutOverVerify::compare_ahead(shardio::RawConn& source, shardio::RawConn& target,
                                                  std::chrono::milliseconds apply_wait, std::optional<DigestDifference>& difference) {
  forget();
  difference.reset();
  watch_stream_keys(target, stream_, guarded_);  // 1
  auto snapshot = source_session_();             // 2: S
  snapshot->exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  snapshot->query("SELECT 1");
  auto position = shardside::flushed_wal_position(source);
  if (shardside::wait_applied(target, stream_, position, apply_wait).outcome != shardside::WaitOutcome::applied) return Ahead::behind;
  auto held = target_session_();  // 3: T
  held->exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  keys_.clear();
  std::vector<std::string> not_in;
  std::vector<std::vector<std::string>> params;
  for (const auto& t : tables_) {
    keys_.push_back(shardside::stream_keys(*held, stream_, t.quoted));
    not_in.push_back(keys_.back().empty() ? "true" : "NOT " + key_in(t, 1));
    params.push_back(keys_.back().empty() ? std::vector<std::string>{} : std::vector<std::string>{catalog::text_array_literal(keys_.back())});
  }
  // 4: both servers at once. On an error on this thread, the future's destructor waits for the
  // source's reads to end.
  auto on_source = std::async(std::launch::async, [&] { return digest_each(*snapshot, true, not_in, params); });
  auto on_target = digest_each(*held, false, not_in, params);
  auto source_digests = on_source.get();
  measure_key_rate(*snapshot);
  snapshot->exec("COMMIT");
  for (std::size_t i = 0; i < tables_.size(); ++i)
    if (source_digests[i] != on_target[i]) {
      difference = DigestDifference{i, tagged_digest(tables_[i].how, source_digests[i]), tagged_digest(tables_[i].how, on_target[i])};
      return Ahead::compared;
    }
  unchanged_ = std::move(source_digests);
  held_ = std::move(held);
  return Ahead::compared;
}

// The rate at which the source digests rows by key, as the window will: K's rows in S. Too few
// keys say nothing (the first guess, or the last window's rate, stays).
void CutOverVerify::measure_key_rate(shardio::RawConn& snapshot) {
  std::size_t keys = 0;
  std::vector<std::string> in;
  std::vector<std::vector<std::string>> params;
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    keys += keys_[i].size();
    in.push_back(keys_[i].empty() ? "" : key_in(tables_[i], 1));
    params.push_back(keys_[i].empty() ? std::vector<std::string>{} : std::vector<std::string>{catalog::text_array_literal(keys_[i])});
  }
  if (keys < min_keys_measured) return;
  auto start = clock::now();
  digest_each(snapshot, true, in, params);
  ms_per_key_ = std::chrono::duration<double, std::milli>(clock::now() - start).count() / static_cast<double>(keys);
}

std::int64_t CutOverVerify::keys_now(shardio::RawConn& target) const { return shardside::stream_key_count(target, stream_); }

double CutOverVerify::predicted_ms(std::int64_t keys) const noexcept { return static_cast<double>(keys) * ms_per_key_; }

CutOverVerify::Window CutOverVerify::compare_changed(shardio::RawConn& source, shardio::RawConn& target) {
  if (!held_) throw internal_error("the cut-over compared the changed keys of " + stream_ + " before the batch was compared");
  auto start = clock::now();
  Window w;
  std::vector<std::string> in_changed, changed_since;
  std::vector<std::vector<std::string>> changed_params, since_params;
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    const auto& t = tables_[i];
    auto changed = shardside::stream_keys(target, stream_, t.quoted);  // K'
    w.keys += static_cast<std::int64_t>(changed.size());
    if (changed.empty()) {
      in_changed.emplace_back();
      changed_since.emplace_back();
      changed_params.emplace_back();
      since_params.emplace_back();
      continue;
    }
    in_changed.push_back(key_in(t, 1));
    changed_params.push_back({catalog::text_array_literal(changed)});
    // K' and not K: the rows T holds of keys changed since it was taken.
    changed_since.push_back(keys_[i].empty() ? key_in(t, 1) : key_in(t, 1) + " AND NOT " + key_in(t, 2));
    since_params.push_back(changed_params.back());
    if (!keys_[i].empty()) since_params.back().push_back(catalog::text_array_literal(keys_[i]));
  }
  auto on_source = std::async(std::launch::async, [&] { return digest_each(source, true, in_changed, changed_params); });
  auto in_snapshot = std::async(std::launch::async, [&] { return digest_each(*held_, false, changed_since, since_params); });
  auto on_target = digest_each(target, false, in_changed, changed_params);
  auto source_now = on_source.get();
  auto held_before = in_snapshot.get();
  if (w.keys > 0) ms_per_key_ = std::chrono::duration<double, std::milli>(clock::now() - start).count() / static_cast<double>(w.keys);
  w.verified = nlohmann::json::object();
  for (std::size_t i = 0; i < tables_.size(); ++i) {
    const auto& t = tables_[i];
    if (source_now[i] != on_target[i]) {
      w.difference = DigestDifference{i, tagged_digest(t.how, source_now[i]), tagged_digest(t.how, on_target[i])};
      return w;
    }
    auto whole = shardio::add_value_digests(shardio::subtract_value_digests(unchanged_[i], held_before[i]), source_now[i]);
    w.verified[t.name] = tagged_digest(t.how, whole);
  }
  return w;
}

}  // namespace shardctl::migrate
