// Just enough of CUDA, on the CPU, to run a kernel body unchanged in a test: the keywords as
// plain C++ (__shared__ becomes static: one tile per launch, the thread blocks run one after
// another), threadIdx/blockIdx/blockDim/gridDim per thread, uint2/uint4, and __syncthreads as a
// std::barrier over one real thread per CUDA thread. It checks a kernel's tiling, barriers and
// indexing on every CI run, where there is no GPU, into twin::Arena host buffers whose guard
// bands catch a write out of bounds; it says nothing of the compiler or the hardware, which the
// *Gpu* tests check on the device. Warp intrinsics (__shfl_sync, __ballot_sync), cooperative
// groups and clusters are not emulated: kernels that use them are checked on the device only.
//
// Include it before the kernel's header, in a test translation unit that includes no CUDA
// header; the kernel names these as CUDA code does, from the global namespace.
#pragma once

#include <barrier>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
inline thread_local dim3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim, gridDim;

namespace sigpu::test::emulation {
inline std::barrier<>* block_barrier = nullptr;
}

inline void __syncthreads() {
  sigpu::test::emulation::block_barrier->arrive_and_wait();
}

namespace sigpu::test::emulation {

/// Whether the kernel meets at __syncthreads: then every CUDA thread of a block is a real
/// thread; without, the threads of a block run one after another, each to its end.
enum class Barriers { none, block };

/// Runs kernel() (the kernel's body, as a lambda calling it with its arguments) for every thread
/// of every block of grid, block after block.
template <typename F>
void launch(dim3 grid, dim3 block, Barriers barriers, F kernel) {
  const unsigned n = block.x * block.y * block.z;
  auto thread = [&](unsigned tid) {
    threadIdx = {tid % block.x, tid / block.x % block.y, tid / (block.x * block.y)};
    blockDim = block;
    gridDim = grid;
    for (unsigned z = 0; z < grid.z; ++z)
      for (unsigned y = 0; y < grid.y; ++y)
        for (unsigned x = 0; x < grid.x; ++x) {
          blockIdx = {x, y, z};
          kernel();
          if (barriers == Barriers::block) __syncthreads();  // the next block reuses the tile
        }
  };
  if (barriers == Barriers::none) {
    for (unsigned t = 0; t < n; ++t) thread(t);
    return;
  }
  std::barrier<> sync(n);
  block_barrier = &sync;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n; ++t) threads.emplace_back(thread, t);
  for (auto& t : threads) t.join();
  block_barrier = nullptr;
}

}  // namespace sigpu::test::emulation
