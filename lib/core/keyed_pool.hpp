// A bounded, blocking pool of reusable resources in groups: at most `per_group` open at once in
// each group, shared by the threads of one run. shardio::ServerPool is its one use (groups are
// servers, items their databases); it is kept apart from any connection so that its accounting
// is tested on its own (tests/unit/test_core_keyed_pool.cpp).
//
// acquire(group, item) hands out, in this order: an idle resource of that item; a new one while
// the group has room; a new one in place of the idle resource of another item that waited
// longest (closed to make room); else it waits until another thread gives one back. A lease
// gives its resource back when it ends: idle, for the next acquire of its item, unless it was
// discarded or the pool's `reusable` test refuses it, when it is closed.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace shardctl {

template <class T>
class KeyedPool {
 public:
  using Open = std::function<std::unique_ptr<T>()>;
  using Reusable = std::function<bool(const T&)>;
  // How the pool closes a resource it ends (evicted, discarded, refused by `reusable`, idle at
  // the pool's end) before destroying it; none: destroying it is closing it.
  using Close = std::function<void(T&)>;

  class Lease {
   public:
    Lease(Lease&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), group_(std::move(other.group_)), item_(std::move(other.item_)),
          resource_(std::move(other.resource_)), fresh_(other.fresh_) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { give_back(); }

    T& operator*() const noexcept { return *resource_; }
    T* operator->() const noexcept { return resource_.get(); }
    T& get() const noexcept { return *resource_; }
    // Whether the resource was opened for this lease (not an idle one handed on).
    bool fresh() const noexcept { return fresh_; }
    // Closes the resource when the lease ends instead of keeping it idle (its state is unknown).
    void discard() noexcept { discard_ = true; }
    // Gives the resource back now; the lease holds nothing afterwards.
    void release() noexcept { give_back(); }

   private:
    friend class KeyedPool;
    Lease(KeyedPool* pool, std::string group, std::string item, std::unique_ptr<T> resource, bool fresh)
        : pool_(pool), group_(std::move(group)), item_(std::move(item)), resource_(std::move(resource)), fresh_(fresh) {}
    void give_back() noexcept {
      if (!pool_) return;
      auto* pool = std::exchange(pool_, nullptr);
      pool->put_back(group_, item_, std::move(resource_), discard_);
    }

    KeyedPool* pool_;
    std::string group_, item_;
    std::unique_ptr<T> resource_;
    bool fresh_ = false;
    bool discard_ = false;
  };

  explicit KeyedPool(int per_group, Reusable reusable = {}, Close close = {})
      : per_group_(std::max(per_group, 1)), reusable_(std::move(reusable)), close_(std::move(close)) {}
  KeyedPool(const KeyedPool&) = delete;
  KeyedPool& operator=(const KeyedPool&) = delete;
  // Every lease must have ended; idle resources are closed.
  ~KeyedPool() {
    for (auto& [name, g] : groups_)
      for (auto& idle : g.idle) end(std::move(idle.resource));
  }

  int per_group() const noexcept { return per_group_; }

  // A resource of `item` in `group`, opened by `open` when none is idle. An exception from
  // `open` frees the slot it was given and propagates.
  Lease acquire(const std::string& group, const std::string& item, const Open& open) {
    std::unique_lock lock(mutex_);
    for (;;) {
      Group& g = groups_[group];
      auto same = std::find_if(g.idle.begin(), g.idle.end(), [&](const Idle& i) { return i.item == item; });
      if (same != g.idle.end()) {
        auto resource = std::move(same->resource);
        g.idle.erase(same);
        return Lease(this, group, item, std::move(resource), false);
      }
      std::unique_ptr<T> evicted;
      if (g.open >= per_group_ && !g.idle.empty()) {
        // The least recently given back (the front) makes room; it is closed outside the lock.
        evicted = std::move(g.idle.front().resource);
        g.idle.pop_front();
        --g.open;
        ++g.evicted;
      }
      if (g.open < per_group_) {
        ++g.open;
        g.peak = std::max(g.peak, g.open);
        lock.unlock();
        end(std::move(evicted));
        std::unique_ptr<T> resource;
        try {
          resource = open();
        } catch (...) {
          lock.lock();
          --groups_[group].open;
          changed_.notify_all();
          throw;
        }
        return Lease(this, group, item, std::move(resource), true);
      }
      changed_.wait(lock);
    }
  }

  // Accounting, for tests and reports: open now (leased or idle), idle now, the most open at
  // once so far, and how many idle ones were closed to make room.
  struct Counts {
    int open = 0;
    int idle = 0;
    int peak = 0;
    int evicted = 0;
  };
  Counts counts(const std::string& group) const {
    std::lock_guard lock(mutex_);
    auto it = groups_.find(group);
    if (it == groups_.end()) return {};
    return {it->second.open, static_cast<int>(it->second.idle.size()), it->second.peak, it->second.evicted};
  }

 private:
  struct Idle {
    std::string item;
    std::unique_ptr<T> resource;
  };
  struct Group {
    int open = 0;
    int peak = 0;
    int evicted = 0;
    std::list<Idle> idle;  // least recently given back first
  };

  void put_back(const std::string& group, const std::string& item, std::unique_ptr<T> resource, bool discard) noexcept {
    bool keep = resource && !discard;
    if (keep && reusable_) {
      try {
        keep = reusable_(*resource);
      } catch (...) {
        keep = false;
      }
    }
    {
      std::lock_guard lock(mutex_);
      Group& g = groups_[group];
      if (keep) {
        g.idle.push_back({item, std::move(resource)});
      } else {
        --g.open;
      }
    }
    changed_.notify_all();
    end(std::move(resource));  // closed outside the lock when not kept (a kept one was moved)
  }

  // Closes and destroys `resource` (none: nothing).
  void end(std::unique_ptr<T> resource) noexcept {
    if (!resource) return;
    if (close_) {
      try {
        close_(*resource);
      } catch (...) {  // destroying it still closes it
      }
    }
  }

  const int per_group_;
  const Reusable reusable_;
  const Close close_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Group> groups_;
};

}  // namespace shardctl
