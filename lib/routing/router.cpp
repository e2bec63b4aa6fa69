#include "routing/router.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "core/error.hpp"
#include "routing/pg_hash.hpp"

namespace shardctl::routing {
namespace {

struct UuidHash {
  std::size_t operator()(const Uuid& u) const noexcept {
    std::uint64_t a, b;
    std::memcpy(&a, u.data(), 8);
    std::memcpy(&b, u.data() + 8, 8);
    return std::hash<std::uint64_t>{}(a ^ (b * 0x9e3779b97f4a7c15ull));
  }
};

// Extracts the C++ value of a Key for the typed routers below.
template <class T>
const T& value_of(const Key& key) {
  return std::get<T>(key);
}

// Parses key text into T without allocating for numbers and uuids; throws the same usage
// Error parse_key gives.
template <class T>
T parse_as(KeyType type, std::string_view text);

template <>
std::int64_t parse_as<std::int64_t>(KeyType type, std::string_view text) {
  std::int64_t v;
  if (try_parse_int64(text, v) &&
      (type != KeyType::int4 ||
       (v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max())))
    return v;
  return std::get<std::int64_t>(parse_key(type, text));  // throws with the right message
}

template <>
Uuid parse_as<Uuid>(KeyType type, std::string_view text) {
  Uuid u;
  if (try_parse_uuid(text, u)) return u;
  return std::get<Uuid>(parse_key(type, text));
}

// Range and hash maps: sorted, non-overlapping half-open ranges found by binary search.
template <class T>
class RangeRouter final : public Router {
 public:
  RangeRouter(MapKind kind, KeyType key_type, std::vector<MappingEntry> entries)
      : kind_(kind), key_type_(key_type) {
    std::sort(entries.begin(), entries.end(), [](const MappingEntry& a, const MappingEntry& b) {
      if (!a.range.low) return static_cast<bool>(b.range.low);
      if (!b.range.low) return false;
      return compare_keys(*a.range.low, *b.range.low) < 0;
    });
    for (std::size_t i = 1; i < entries.size(); ++i)
      if (ranges_overlap(entries[i - 1].range, entries[i].range))
        throw data_error("mappings " + format_range(entries[i - 1].range) + " and " +
                         format_range(entries[i].range) + " overlap");
    for (auto& e : entries) {
      Slot s;
      s.low_unbounded = !e.range.low;
      if (e.range.low) s.low = value_of<T>(*e.range.low);
      s.high_unbounded = !e.range.high;
      if (e.range.high) s.high = value_of<T>(*e.range.high);
      s.route = Route{e.shard_index, e.online};
      slots_.push_back(std::move(s));
    }
  }

  std::optional<Route> route(const Key& key) const override {
    if (kind_ == MapKind::hash) return find(hash_key(key_type_, key));
    return find_typed(value_of<T>(key));
  }

  std::optional<Route> route_text(std::string_view text) const override {
    if (kind_ == MapKind::hash) {
      if (key_type_ == KeyType::text) return find(pg_hashtextextended(text_checked(text)));
      if (key_type_ == KeyType::uuid) return find(pg_uuid_hash_extended(parse_as<Uuid>(key_type_, text)));
      std::int64_t v = parse_as<std::int64_t>(key_type_, text);
      return find(key_type_ == KeyType::int4 ? pg_hashint4extended(static_cast<std::int32_t>(v))
                                             : pg_hashint8extended(v));
    }
    if constexpr (std::is_same_v<T, std::string>) {
      return find_view(text_checked(text));
    } else {
      return find_typed(parse_as<T>(key_type_, text));
    }
  }

 private:
  struct Slot {
    T low{};
    T high{};
    bool low_unbounded = false;
    bool high_unbounded = false;
    Route route{};
  };

  static std::string_view text_checked(std::string_view text) {
    if (text.find('\0') != std::string_view::npos) throw usage_error("a text key cannot contain a NUL byte");
    return text;
  }

  static int cmp(const T& a, const T& b) noexcept {
    if constexpr (std::is_same_v<T, std::int64_t>) {
      return a < b ? -1 : a > b ? 1 : 0;
    } else if constexpr (std::is_same_v<T, Uuid>) {
      return std::memcmp(a.data(), b.data(), 16);
    } else {
      return cmp_view(a, b);
    }
  }

  static int cmp_view(std::string_view a, std::string_view b) noexcept {
    int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
    if (c != 0) return c;
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }

  template <class V, class Cmp>
  std::optional<Route> search(const V& key, Cmp compare) const {
    // The last slot whose low is <= key.
    auto it = std::upper_bound(slots_.begin(), slots_.end(), key, [&](const V& k, const Slot& s) {
      return !s.low_unbounded && compare(k, s.low) < 0;
    });
    if (it == slots_.begin()) return std::nullopt;
    const Slot& s = *(it - 1);
    if (!s.high_unbounded && compare(key, s.high) >= 0) return std::nullopt;
    return s.route;
  }

  std::optional<Route> find_typed(const T& key) const { return search(key, cmp); }

  std::optional<Route> find_view(std::string_view key) const {
    if constexpr (std::is_same_v<T, std::string>) {
      return search(key, [](std::string_view a, const std::string& b) { return cmp_view(a, b); });
    } else {
      return std::nullopt;
    }
  }

  // Hash maps keep int64 hash ranges whatever the key type.
  std::optional<Route> find(std::int64_t hash) const {
    if constexpr (std::is_same_v<T, std::int64_t>) {
      return search(hash, cmp);
    } else {
      return std::nullopt;
    }
  }

  MapKind kind_;
  KeyType key_type_;
  std::vector<Slot> slots_;
};

// List maps: one hash table lookup per key.
template <class T, class Hash = std::hash<T>>
class ListRouter final : public Router {
 public:
  ListRouter(KeyType key_type, std::vector<MappingEntry> entries) : key_type_(key_type) {
    points_.reserve(entries.size());
    for (auto& e : entries) {
      if (!e.is_point || !e.range.low) throw data_error("a list map holds only points");
      auto [it, inserted] = points_.emplace(value_of<T>(*e.range.low), Route{e.shard_index, e.online});
      if (!inserted) throw data_error("point " + format_key(*e.range.low) + " is mapped twice");
    }
  }

  std::optional<Route> route(const Key& key) const override { return find(value_of<T>(key)); }

  std::optional<Route> route_text(std::string_view text) const override {
    if constexpr (std::is_same_v<T, std::string>) {
      if (text.find('\0') != std::string_view::npos) throw usage_error("a text key cannot contain a NUL byte");
      // Heterogeneous lookup needs C++20 transparent hashing; a short-lived string is cheap
      // next to the hash itself for the key sizes seen in practice.
      return find(std::string(text));
    } else {
      return find(parse_as<T>(key_type_, text));
    }
  }

 private:
  std::optional<Route> find(const T& key) const {
    auto it = points_.find(key);
    if (it == points_.end()) return std::nullopt;
    return it->second;
  }

  KeyType key_type_;
  std::unordered_map<T, Route, Hash> points_;
};

}  // namespace

std::unique_ptr<Router> make_router(MapKind kind, KeyType key_type, std::vector<MappingEntry> entries) {
  if (kind == MapKind::hash) return std::make_unique<RangeRouter<std::int64_t>>(kind, key_type, std::move(entries));
  if (kind == MapKind::range) {
    switch (key_type) {
      case KeyType::int4:
      case KeyType::int8: return std::make_unique<RangeRouter<std::int64_t>>(kind, key_type, std::move(entries));
      case KeyType::text: return std::make_unique<RangeRouter<std::string>>(kind, key_type, std::move(entries));
      case KeyType::uuid: return std::make_unique<RangeRouter<Uuid>>(kind, key_type, std::move(entries));
    }
  }
  switch (key_type) {
    case KeyType::int4:
    case KeyType::int8: return std::make_unique<ListRouter<std::int64_t>>(key_type, std::move(entries));
    case KeyType::text: return std::make_unique<ListRouter<std::string>>(key_type, std::move(entries));
    case KeyType::uuid: return std::make_unique<ListRouter<Uuid, UuidHash>>(key_type, std::move(entries));
  }
  throw internal_error("unknown map kind");
}

}  // namespace shardctl::routing
