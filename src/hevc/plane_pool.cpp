#include "hevc/plane_pool.hpp"

#include <mutex>
#include <new>
#include <vector>

namespace sigpu::hevc {

PlaneStore::PlaneStore(std::size_t samples, Memory want) : size_(samples) {
  const std::size_t bytes = samples * sizeof(std::uint16_t);
  if (want == Memory::device) {
    data_ = static_cast<std::uint16_t*>(allocate_device(bytes));
    memory_ = Memory::device;
    return;
  }
  if (want == Memory::pinned) data_ = static_cast<std::uint16_t*>(allocate_pinned(bytes));
  if (data_) {
    memory_ = Memory::pinned;
    return;
  }
  data_ = static_cast<std::uint16_t*>(::operator new(bytes));
}

PlaneStore::~PlaneStore() {
  switch (memory_) {
    case Memory::device:
      release_device(data_);
      break;
    case Memory::pinned:
      release_pinned(data_);
      break;
    case Memory::pageable:
      ::operator delete(data_);
      break;
  }
}

struct PlaneRecycler::Shelf {
  std::mutex mutex;
  std::vector<std::unique_ptr<PlaneStore>> free;
  bool no_pinned = false;  ///< a pinned allocation failed: stop asking
};

void PlaneRecycler::operator()(PlaneStore* store) const {
  std::unique_ptr<PlaneStore> owned(store);
  const std::shared_ptr<Shelf> shelf = shelf_.lock();
  if (!shelf) return;  // the pool is gone: freed here
  std::lock_guard lock(shelf->mutex);
  // Stores of another size (the stream changed resolution) are not kept.
  std::erase_if(shelf->free, [&](const auto& s) {
    return s->memory() == store->memory() && s->size() != store->size();
  });
  shelf->free.push_back(std::move(owned));
}

PlanePool::PlanePool() : shelf_(std::make_shared<PlaneRecycler::Shelf>()) {}

PooledStore PlanePool::take(std::size_t samples, Memory memory) {
  Memory want;
  {
    std::lock_guard lock(shelf_->mutex);
    want = memory == Memory::pinned && shelf_->no_pinned ? Memory::pageable : memory;
    auto& free = shelf_->free;
    for (auto it = free.begin(); it != free.end(); ++it)
      if ((*it)->size() == samples && (*it)->memory() == want) {
        PooledStore s(it->release(), PlaneRecycler(shelf_));
        free.erase(it);
        return s;
      }
  }
  PooledStore s(new PlaneStore(samples, want), PlaneRecycler(shelf_));
  if (want == Memory::pinned && s->memory() != Memory::pinned) {
    std::lock_guard lock(shelf_->mutex);
    shelf_->no_pinned = true;  // later pictures take pageable stores without trying again
  }
  return s;
}

}  // namespace sigpu::hevc
