#include "hevc/plane_pool.hpp"

#include <new>

namespace sigpu::hevc {

PlaneStore::PlaneStore(std::size_t samples, bool want_pinned) : size_(samples) {
  const std::size_t bytes = samples * sizeof(std::uint16_t);
  if (want_pinned) data_ = static_cast<std::uint16_t*>(allocate_pinned(bytes));
  pinned_ = data_ != nullptr;
  if (!data_) data_ = static_cast<std::uint16_t*>(::operator new(bytes));
}

PlaneStore::~PlaneStore() {
  if (pinned_)
    release_pinned(data_);
  else
    ::operator delete(data_);
}

std::unique_ptr<PlaneStore> PlanePool::take(std::size_t samples, bool pinned) {
  bool want;
  {
    std::lock_guard lock(mutex_);
    want = pinned && !no_pinned_;
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if ((*it)->size() == samples && (*it)->pinned() == want) {
        std::unique_ptr<PlaneStore> s = std::move(*it);
        free_.erase(it);
        return s;
      }
  }
  auto s = std::make_unique<PlaneStore>(samples, want);
  if (want && !s->pinned()) {
    std::lock_guard lock(mutex_);
    no_pinned_ = true;  // later pictures take pageable stores without trying again
  }
  return s;
}

void PlanePool::give(std::unique_ptr<PlaneStore> store) {
  if (!store) return;
  std::lock_guard lock(mutex_);
  // Stores of another size (the stream changed resolution) are not kept.
  if (!free_.empty() && free_.front()->size() != store->size()) free_.clear();
  free_.push_back(std::move(store));
}

}  // namespace sigpu::hevc
