#include "hevc/plane_pool.hpp"

#include <new>

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

std::unique_ptr<PlaneStore> PlanePool::take(std::size_t samples, Memory memory) {
  Memory want;
  {
    std::lock_guard lock(mutex_);
    want = memory == Memory::pinned && no_pinned_ ? Memory::pageable : memory;
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if ((*it)->size() == samples && (*it)->memory() == want) {
        std::unique_ptr<PlaneStore> s = std::move(*it);
        free_.erase(it);
        return s;
      }
  }
  auto s = std::make_unique<PlaneStore>(samples, want);
  if (want == Memory::pinned && s->memory() != Memory::pinned) {
    std::lock_guard lock(mutex_);
    no_pinned_ = true;  // later pictures take pageable stores without trying again
  }
  return s;
}

void PlanePool::give(std::unique_ptr<PlaneStore> store) {
  if (!store) return;
  std::lock_guard lock(mutex_);
  // Stores of another size (the stream changed resolution) are not kept.
  std::erase_if(free_, [&](const auto& s) {
    return s->memory() == store->memory() && s->size() != store->size();
  });
  free_.push_back(std::move(store));
}

}  // namespace sigpu::hevc
