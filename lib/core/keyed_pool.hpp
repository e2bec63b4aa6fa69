// A bounded, blocking pool of reusable resources in groups: at most `per_group` open at once in
// each group, shared by the threads of one run. shardio::ServerPool is its one use (groups are
// servers, items their databases); it is kept apart from any connection so that its accounting
// is tested on its own (tests/unit/test_core_keyed_pool.cpp).
//
// acquire(group, item) hands out, in this order: an idle resource of that item; a new one while
// the group has room; else the idle resource of another item given back longest ago is closed
// to make room, and it waits until another thread gives one back or a closing one is gone. A
// lease gives its resource back when it ends: idle, for the next acquire of its item, unless it
// was discarded or the pool's `reusable` test refuses it, when it is closed.
//
// Closing may take a while (a connection is waited out until its server let go of it), so it
// happens on a thread of its own, and a resource being closed still counts as open in its group
// until it is gone. When a resource is given back, the idle ones given back longest ago start
// closing at once while the group would otherwise have no slot to spare but the one being
// closed, so that the next acquire in that group (often the same thread's, a moment later)
// finds its room made meanwhile rather than waiting for a close.
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
#include <thread>
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
          resource_(std::move(other.resource_)), fresh_(other.fresh_), discard_(other.discard_) {}
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
  // Every lease must have ended. Waits for the resources being closed; closes the idle ones.
  ~KeyedPool() {
    settle();
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
      if (g.open < per_group_) {
        ++g.open;
        g.peak = std::max(g.peak, g.open);
        lock.unlock();
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
      // Full: unless a resource being closed will make room, the idle one given back longest
      // ago (the front) does, once it is gone.
      if (g.open - g.closing >= per_group_ && !g.idle.empty()) evict_front(group, g);
      changed_.wait(lock);
    }
  }

  // Waits until no resource is being closed.
  void settle() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return closing_ == 0; });
  }

  // Accounting, for tests and reports: open now (leased, idle or being closed), idle now, the
  // most open at once so far, and how many idle ones were closed to make room.
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
    int open = 0;  // leased, idle and being closed
    int closing = 0;
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
    std::lock_guard lock(mutex_);
    Group& g = groups_[group];
    if (!keep) close_later(group, std::move(resource));
    else g.idle.push_back({item, std::move(resource)});
    // The room for the group's next acquire, made meanwhile: one slot free even while the
    // resource closed last is still going (a group of one keeps nothing idle).
    while (g.open - g.closing >= per_group_ - 1 && !g.idle.empty()) evict_front(group, g);
    changed_.notify_all();
  }

  // Under mutex_: the group's idle resource given back longest ago starts closing.
  void evict_front(const std::string& group, Group& g) {
    auto resource = std::move(g.idle.front().resource);
    g.idle.pop_front();
    ++g.evicted;
    close_later(group, std::move(resource));
  }

  // Under mutex_: closes `resource` on a thread of its own; its group counts it as open until
  // it is gone (none: the slot is free at once).
  void close_later(const std::string& group, std::unique_ptr<T> resource) noexcept {
    Group& g = groups_[group];
    if (!resource) {
      --g.open;
      return;
    }
    ++closing_;
    ++g.closing;
    try {
      std::thread([this, group, r = std::move(resource)]() mutable {
        end(std::move(r));
        std::lock_guard lock(mutex_);
        Group& done = groups_[group];
        --done.open;
        --done.closing;
        --closing_;
        changed_.notify_all();
      }).detach();
    } catch (...) {
      // No thread to be had: the resource went with the thread's function and was destroyed
      // (closed, without waiting).
      --closing_;
      --g.closing;
      --g.open;
    }
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
  int closing_ = 0;  // resources being closed on threads of their own
};

}  // namespace shardctl
