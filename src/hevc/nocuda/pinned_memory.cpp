// Builds without CUDA have no pinned memory: picture storage is ordinary memory.
#include "hevc/plane_pool.hpp"

namespace sigpu::hevc {

void* allocate_pinned(std::size_t) {
  return nullptr;
}

void release_pinned(void*) {}

}  // namespace sigpu::hevc
