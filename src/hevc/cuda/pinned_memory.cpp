// Pinned picture storage for the GPU filter's copies (plane_pool.hpp).
#include <cuda_runtime.h>

#include "hevc/plane_pool.hpp"

namespace sigpu::hevc {

void* allocate_pinned(std::size_t bytes) {
  void* p = nullptr;
  if (cudaMallocHost(&p, bytes) != cudaSuccess) {
    cudaGetLastError();  // clear the error so that later CUDA calls do not report it
    return nullptr;
  }
  return p;
}

void release_pinned(void* p) {
  cudaFreeHost(p);
}

}  // namespace sigpu::hevc
