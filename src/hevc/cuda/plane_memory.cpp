// Picture storage the GPU copies from and reconstructs into (plane_pool.hpp).
#include <cuda_runtime.h>

#include <string>

#include "core/cuda/buffer.hpp"
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

void* allocate_device(std::size_t bytes) {
  void* p = nullptr;
  SIGPU_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void release_device(void* p) {
  cudaFree(p);
}

void copy_to_host(std::uint16_t* dst, const std::uint16_t* src, std::size_t src_pitch,
                  std::size_t width, std::size_t rows) {
  constexpr std::size_t s = sizeof(std::uint16_t);
  SIGPU_CUDA_CHECK(
      cudaMemcpy2D(dst, width * s, src, src_pitch * s, width * s, rows, cudaMemcpyDeviceToHost));
}

}  // namespace sigpu::hevc
