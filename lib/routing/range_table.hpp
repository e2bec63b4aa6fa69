// Internal to lib/routing: the sorted table of half-open ranges the range and hash routers
// search, and the per-value-type traits they share with the list router. Not for other folders.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/key.hpp"
#include "routing/router.hpp"

namespace shardctl::routing::detail {

// How one C++ value type of a Key is looked up: the non-owning view a lookup takes (so that
// text lookups need not allocate), the lowest value (an unbounded low is stored as it, which
// keeps the search free of "is this bound present" tests), and the order.
template <class T>
struct ValueTraits;

template <>
struct ValueTraits<std::int64_t> {
  using View = std::int64_t;
  static constexpr bool branch_free_search = true;
  static std::int64_t lowest() noexcept { return std::numeric_limits<std::int64_t>::min(); }
  static bool less(View a, View b) noexcept { return a < b; }
};

template <>
struct ValueTraits<std::string> {
  using View = std::string_view;
  static constexpr bool branch_free_search = false;
  static std::string lowest() { return {}; }
  // char_traits<char> compares as unsigned char: bytewise, PostgreSQL's C collation.
  static bool less(View a, View b) noexcept { return a < b; }
};

template <>
struct ValueTraits<Uuid> {
  using View = const Uuid&;
  static constexpr bool branch_free_search = true;
  static Uuid lowest() noexcept { return Uuid{}; }
  // Bytewise as PostgreSQL's uuid_cmp (a memcmp), done as two big-endian 64-bit compares.
  static bool less(View a, View b) noexcept {
    std::uint64_t ah = be64(a.data()), bh = be64(b.data());
    if (ah != bh) return ah < bh;
    return be64(a.data() + 8) < be64(b.data() + 8);
  }

 private:
  static std::uint64_t be64(const std::uint8_t* p) noexcept {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
    return v;
  }
};

// Non-overlapping half-open ranges, added in ascending order of their low bound.
template <class T>
class RangeTable {
 public:
  using Traits = ValueTraits<T>;
  using View = typename Traits::View;

  void reserve(std::size_t n) {
    lows_.reserve(n);
    uppers_.reserve(n);
  }

  // `low` is Traits::lowest() for an unbounded low; `high` empty for an unbounded high.
  void add(T low, std::optional<T> high, Route route) {
    lows_.push_back(std::move(low));
    uppers_.push_back(Upper{high ? std::move(*high) : T{}, !high.has_value(), route});
  }

  std::optional<Route> find(View key) const noexcept {
    const T* base = last_not_above(key);
    if (base == nullptr) return std::nullopt;  // below the lowest range
    const Upper& up = uppers_[static_cast<std::size_t>(base - lows_.data())];
    if (!up.unbounded && !Traits::less(key, up.high)) return std::nullopt;  // in a gap
    return up.route;
  }

 private:
  // The last low <= key, or nullptr.
  const T* last_not_above(View key) const noexcept {
    if constexpr (Traits::branch_free_search) {
      // Conditional moves instead of branches: the CPU cannot mispredict a comparison of
      // random keys, which is what makes lookups of small fixed-size values several times
      // faster. The answer stays within [base, base + n).
      std::size_t n = lows_.size();
      if (n == 0) return nullptr;
      const T* base = lows_.data();
      while (n > 1) {
        std::size_t half = n / 2;
        base = Traits::less(key, base[half]) ? base : base + half;
        n -= half;
      }
      return Traits::less(key, *base) ? nullptr : base;
    } else {
      // Strings: each comparison chases a pointer, so let the CPU speculate the next probe.
      auto it = std::upper_bound(lows_.begin(), lows_.end(), key,
                                 [](View k, const T& low) { return Traits::less(k, low); });
      return it == lows_.begin() ? nullptr : &*(it - 1);
    }
  }

  // Lows apart from the rest so that the search touches as few cache lines as it can.
  struct Upper {
    T high;
    bool unbounded;
    Route route;
  };
  std::vector<T> lows_;
  std::vector<Upper> uppers_;
};

}  // namespace shardctl::routing::detail
