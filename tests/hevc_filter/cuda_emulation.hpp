// Just enough of CUDA, on the CPU, to run src/hevc_filter/cuda/kernels.cuh unchanged: the
// keywords as plain C++ (__shared__ becomes static: one tile per launch, the thread blocks run
// one after another), threadIdx/blockIdx per thread, uint2/uint4, and __syncthreads as a
// std::barrier over one real thread per CUDA thread. It checks the kernels' tiling, barriers and
// indexing on every CI run, where there is no GPU; it says nothing about the compiler or the
// hardware, which the *Gpu* tests check on the device.
//
// Include it before kernels.cuh, in a test translation unit that includes no CUDA header.
#pragma once

#include <barrier>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

namespace sigpu::hevc_filter::cuda {

struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};
struct EmulatedIndex {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local EmulatedIndex threadIdx, blockIdx;
inline std::barrier<>* emulated_barrier = nullptr;
inline void __syncthreads() {
  emulated_barrier->arrive_and_wait();
}

/// Runs kernel() for every thread of every block of grid, block by block. With barriers, one
/// std::thread per CUDA thread walks all blocks, meeting the others at every __syncthreads and
/// after each block; without, the threads run one after another.
template <typename S, typename F>
void emulate_launch(const S& grid, const S& block, bool barriers, F kernel) {
  const int n = int(block.x * block.y * block.z);
  auto thread = [&](int tid) {
    threadIdx = {unsigned(tid) % block.x, unsigned(tid) / block.x % block.y,
                 unsigned(tid) / (block.x * block.y)};
    for (unsigned z = 0; z < grid.z; ++z)
      for (unsigned y = 0; y < grid.y; ++y)
        for (unsigned x = 0; x < grid.x; ++x) {
          blockIdx = {x, y, z};
          kernel();
          if (barriers) __syncthreads();  // the block ends before the next reuses its tile
        }
  };
  if (!barriers) {
    for (int t = 0; t < n; ++t) thread(t);
    return;
  }
  std::barrier<> sync(n);
  emulated_barrier = &sync;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(thread, t);
  for (auto& t : threads) t.join();
  emulated_barrier = nullptr;
}

}  // namespace sigpu::hevc_filter::cuda
