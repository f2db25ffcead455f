// Objects handed out as shared_ptr and taken back for reuse whoever drops them last. A 4K
// picture's per-block state is megabytes of vectors; freed and allocated again per picture, each
// fresh page costs a fault on first touch, and the faults of many workers contend in the kernel.
// The last reference to a picture is often another picture's reference list, dropped on any
// thread, hence a deleter rather than a give-back call.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace sigpu::hevc {

/// Thread-safe; the objects it hands out may outlive it (they are then deleted when dropped).
template <class T>
class Recycler {
 public:
  /// `tidy` runs on each dropped object before it is kept, on the thread that dropped it: it
  /// lets go of what the object holds that others need back at once.
  explicit Recycler(std::function<void(T&)> tidy = {})
      : shelf_(std::make_shared<Shelf>(std::move(tidy))) {}

  /// Keep at most n dropped objects (those beyond are deleted).
  void keep(std::size_t n) {
    std::lock_guard lock(shelf_->mutex);
    shelf_->keep = n;
  }

  /// A kept object as it was dropped (after tidy), or a new one.
  std::shared_ptr<T> take() {
    std::unique_ptr<T> p;
    {
      std::lock_guard lock(shelf_->mutex);
      if (!shelf_->free.empty()) {
        p = std::move(shelf_->free.back());
        shelf_->free.pop_back();
      }
    }
    if (!p) p = std::make_unique<T>();
    return std::shared_ptr<T>(p.release(), GiveBack{shelf_});
  }

 private:
  struct Shelf {
    explicit Shelf(std::function<void(T&)> t) : tidy(std::move(t)) {}
    std::mutex mutex;
    std::vector<std::unique_ptr<T>> free;
    std::size_t keep = 0;
    const std::function<void(T&)> tidy;
  };

  struct GiveBack {
    std::weak_ptr<Shelf> shelf;
    void operator()(T* object) const {
      std::unique_ptr<T> owned(object);
      const std::shared_ptr<Shelf> s = shelf.lock();
      if (!s) return;  // the recycler is gone: deleted here
      if (s->tidy) s->tidy(*owned);
      std::lock_guard lock(s->mutex);
      if (s->free.size() < s->keep) s->free.push_back(std::move(owned));
    }
  };

  std::shared_ptr<Shelf> shelf_;
};

}  // namespace sigpu::hevc
