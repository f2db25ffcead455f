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

void copy_to_host(std::uint16_t*, const std::uint16_t*, std::size_t, std::size_t, std::size_t) {
  throw UnsupportedError("HEVC: this build has no CUDA, so no frames on a device");
}

}  // namespace sigpu::hevc
