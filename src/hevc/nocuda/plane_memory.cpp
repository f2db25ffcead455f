// Builds without CUDA have no pinned or device memory: picture storage is ordinary memory.
#include <sigpu/core.hpp>

#include "hevc/plane_pool.hpp"

namespace sigpu::hevc {

void* allocate_pinned(std::size_t) {
  return nullptr;
}

void release_pinned(void*) {}

void* allocate_device(std::size_t) {
  throw UnsupportedError("HEVC: this build has no CUDA, so no device memory for pictures");
}

void release_device(void*) {}

}  // namespace sigpu::hevc
