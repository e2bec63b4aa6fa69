// One Router class per map kind, templated on the key's C++ value type so that route_text
// parses straight into an int64 / Uuid / string_view and never allocates on the lookup path.
#include "routing/router.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "routing/pg_hash.hpp"
#include "routing/range_table.hpp"

namespace shardctl::routing {
namespace {

using detail::RangeTable;
using detail::ValueTraits;

// The C++ value type a key type is stored as.
template <KeyType K>
using ValueOf = std::conditional_t<K == KeyType::text, std::string,
                                   std::conditional_t<K == KeyType::uuid, Uuid, std::int64_t>>;

// --- parsing key text without allocating ---------------------------------------------------

[[noreturn]] void throw_bad_text(KeyType type, std::string_view text) {
  parse_key(type, text);  // throws the usage Error every other command gives for this text
  throw internal_error("key text was refused by the router but accepted by parse_key");
}

// The value of key text of type K, as the view a RangeTable or hash table looks up by.
template <KeyType K>
typename ValueTraits<ValueOf<K>>::View parse_view(std::string_view text, Uuid& uuid_storage) {
  if constexpr (K == KeyType::text) {
    if (text.find('\0') != std::string_view::npos || !valid_utf8(text)) throw_bad_text(K, text);
    return text;
  } else if constexpr (K == KeyType::uuid) {
    if (!try_parse_uuid(text, uuid_storage)) throw_bad_text(K, text);
    return uuid_storage;
  } else {
    std::int64_t v = 0;
    bool ok = try_parse_int64(text, v);
    if constexpr (K == KeyType::int4)
      ok = ok && v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
    if (!ok) throw_bad_text(K, text);
    return v;
  }
}

// A parsed Key of the map's type; anything else is refused as the same usage Error.
template <KeyType K>
const ValueOf<K>& checked_value(const Key& key) {
  if (!key_matches_type(K, key))
    throw usage_error("'" + format_key(key) + "' is not a valid " + std::string(to_text(K)) + " key");
  return std::get<ValueOf<K>>(key);
}

template <KeyType K>
std::int64_t hash_of(typename ValueTraits<ValueOf<K>>::View v) noexcept {
  if constexpr (K == KeyType::int4) return pg_hashint4extended(static_cast<std::int32_t>(v));
  if constexpr (K == KeyType::int8) return pg_hashint8extended(v);
  if constexpr (K == KeyType::text) return pg_hashtextextended(v);
  if constexpr (K == KeyType::uuid) return pg_uuid_hash_extended(v);
}

// --- the routers ------------------------------------------------------------------------------

template <KeyType K>
class RangeRouter final : public Router {
 public:
  explicit RangeRouter(RangeTable<ValueOf<K>> table) : table_(std::move(table)) {}

  std::optional<Route> route(const Key& key) const override { return table_.find(checked_value<K>(key)); }

  std::optional<Route> route_text(std::string_view text) const override {
    Uuid storage;  // written by parse_view for uuid keys only
    return table_.find(parse_view<K>(text, storage));
  }

 private:
  RangeTable<ValueOf<K>> table_;
};

// Hash maps: ranges of the key's PostgreSQL extended hash (virtual buckets).
template <KeyType K>
class HashRouter final : public Router {
 public:
  explicit HashRouter(RangeTable<std::int64_t> table) : table_(std::move(table)) {}

  std::optional<Route> route(const Key& key) const override {
    return table_.find(hash_of<K>(checked_value<K>(key)));
  }

  std::optional<Route> route_text(std::string_view text) const override {
    Uuid storage;  // written by parse_view for uuid keys only
    return table_.find(hash_of<K>(parse_view<K>(text, storage)));
  }

 private:
  RangeTable<std::int64_t> table_;
};

struct UuidHash {
  std::size_t operator()(const Uuid& u) const noexcept {
    std::uint64_t a, b;
    std::memcpy(&a, u.data(), 8);
    std::memcpy(&b, u.data() + 8, 8);
    return std::hash<std::uint64_t>{}(a ^ (b * 0x9e3779b97f4a7c15ull));
  }
};

// Transparent, so that a text lookup by string_view needs no std::string.
struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <KeyType K>
struct PointTable {
  using type = std::unordered_map<std::int64_t, Route>;
};
template <>
struct PointTable<KeyType::text> {
  using type = std::unordered_map<std::string, Route, TextHash, std::equal_to<>>;
};
template <>
struct PointTable<KeyType::uuid> {
  using type = std::unordered_map<Uuid, Route, UuidHash>;
};

// List maps: one hash table probe per key.
template <KeyType K>
class ListRouter final : public Router {
 public:
  explicit ListRouter(const std::vector<MappingEntry>& entries) {
    points_.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (const auto& e = entries[i];
          !points_.emplace(std::get<ValueOf<K>>(*e.range.low), Route{e.shard_index, e.online, static_cast<std::int32_t>(i)})
               .second)
        throw data_error("point " + format_key(*e.range.low) + " is mapped twice",
                         "`shardctl mapping list` shows the mappings of the map");
  }

  std::optional<Route> route(const Key& key) const override { return find(checked_value<K>(key)); }

  std::optional<Route> route_text(std::string_view text) const override {
    Uuid storage;  // written by parse_view for uuid keys only
    return find(parse_view<K>(text, storage));
  }

 private:
  std::optional<Route> find(typename ValueTraits<ValueOf<K>>::View v) const {
    auto it = points_.find(v);
    if (it == points_.end()) return std::nullopt;
    return it->second;
  }

  typename PointTable<K>::type points_;
};

// --- building ---------------------------------------------------------------------------------

std::string shown(const MappingEntry& e) {
  return e.is_point && e.range.low ? format_key(*e.range.low) : format_range(e.range);
}

// Every entry of a list map is a point of the map's key type.
void check_points(KeyType key_type, const std::vector<MappingEntry>& entries) {
  for (const auto& e : entries) {
    if (!e.is_point || !e.range.low) throw data_error("a list map holds only points, not the range " + shown(e));
    if (!key_matches_type(key_type, *e.range.low))
      throw data_error("point '" + format_key(*e.range.low) + "' is not a valid " +
                       std::string(to_text(key_type)) + " key");
  }
}

// Sorts the ranges of a range or hash map by low bound and builds the search table. Ranges
// must be non-empty, with bounds of `bound_type` (bigint hash values for hash maps), and must
// not overlap: sorted by low, it is enough to compare each range with the one before it.
template <class T>
RangeTable<T> build_table(MapKind kind, KeyType bound_type, const std::vector<MappingEntry>& entries) {
  struct Item {
    T low;  // ValueTraits<T>::lowest() when unbounded
    std::optional<T> high;
    const MappingEntry* entry;
  };
  std::vector<Item> items;
  items.reserve(entries.size());
  for (const auto& e : entries) {
    if (e.is_point)
      throw data_error("a " + std::string(to_text(kind)) + " map holds only ranges, not the point " + shown(e));
    for (const auto* bound : {&e.range.low, &e.range.high})
      if (*bound && !key_matches_type(bound_type, **bound))
        throw data_error("bound '" + format_key(**bound) + "' of mapping " + shown(e) + " is not a valid " +
                         std::string(to_text(bound_type)) + (kind == MapKind::hash ? " hash value" : " key"));
    if (e.range.low && e.range.high && compare_keys(*e.range.low, *e.range.high) >= 0)
      throw data_error("mapping " + shown(e) + " is empty: its low bound must be below its high bound");
    Item item{e.range.low ? std::get<T>(*e.range.low) : ValueTraits<T>::lowest(), std::nullopt, &e};
    if (e.range.high) item.high = std::get<T>(*e.range.high);
    items.push_back(std::move(item));
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return ValueTraits<T>::less(a.low, b.low); });
  for (std::size_t i = 1; i < items.size(); ++i)
    if (!items[i - 1].high || ValueTraits<T>::less(items[i].low, *items[i - 1].high))
      throw data_error("mappings " + shown(*items[i - 1].entry) + " and " + shown(*items[i].entry) + " overlap",
                       "ranges of one map must not overlap; `shardctl mapping list` shows them");
  RangeTable<T> table;
  table.reserve(items.size());
  for (auto& item : items)  // only now: moving out earlier would empty the bounds compared above
    table.add(std::move(item.low), std::move(item.high), Route{item.entry->shard_index, item.entry->online,
                                                                    static_cast<std::int32_t>(item.entry - entries.data())});
  return table;
}

template <KeyType K>
std::unique_ptr<Router> make_typed(MapKind kind, const std::vector<MappingEntry>& entries) {
  switch (kind) {
    case MapKind::list:
      check_points(K, entries);
      return std::make_unique<ListRouter<K>>(entries);
    case MapKind::range:
      return std::make_unique<RangeRouter<K>>(build_table<ValueOf<K>>(kind, K, entries));
    case MapKind::hash:
      return std::make_unique<HashRouter<K>>(build_table<std::int64_t>(kind, KeyType::int8, entries));
  }
  throw internal_error("unknown map kind");
}

}  // namespace

std::unique_ptr<Router> make_router(MapKind kind, KeyType key_type, std::vector<MappingEntry> entries) {
  switch (key_type) {
    case KeyType::int4: return make_typed<KeyType::int4>(kind, entries);
    case KeyType::int8: return make_typed<KeyType::int8>(kind, entries);
    case KeyType::text: return make_typed<KeyType::text>(kind, entries);
    case KeyType::uuid: return make_typed<KeyType::uuid>(kind, entries);
  }
  throw internal_error("unknown key type");
}

}  // namespace shardctl::routing
