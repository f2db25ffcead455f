// The CUDA ProRes kernels, thin wrappers around kernel_agents.hpp. VldKernel: one thread per
// slice and component. IdctKernel: 32 blocks of 8x8 per thread block, eight threads per block
// (one row, then one column each) in shared memory.
#pragma once

#include <cstdint>

#include "prores/kernel_agents.hpp"

namespace sigpu::prores::cuda {

/// Scan tables: progressive, then interlaced.
__constant__ std::uint8_t c_scan[2 * 64];

inline constexpr int kVldThreads = 128;

__global__ void __launch_bounds__(kVldThreads) VldKernel(VldParams p) {
  // Lanes index the scan table by their own coefficient positions: from shared memory these
  // loads do not serialise as divergent constant-memory reads do.
  __shared__ std::uint8_t scan[2 * 64];
  static_assert(kVldThreads >= 2 * 64);
  if (threadIdx.x < 2 * 64) scan[threadIdx.x] = c_scan[threadIdx.x];
  __syncthreads();
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t < p.total_slices * p.layout.planes) vld_agent(p, t, scan);
}

inline constexpr int kIdctBlocksPerCta = 32;

template <int BitDepth>
__global__ void __launch_bounds__(8 * kIdctBlocksPerCta) IdctKernel(IdctParams p) {
  __shared__ std::int16_t tile[kIdctBlocksPerCta][64];
  const int local = static_cast<int>(threadIdx.x >> 3), r = static_cast<int>(threadIdx.x & 7);
  const IdctTask t =
      idct_task(p, static_cast<std::int64_t>(blockIdx.x) * kIdctBlocksPerCta + local);
  if (t.coded) idct_row_agent<BitDepth>(p, t, r, tile[local]);
  __syncthreads();
  if (t.coded) idct_col<BitDepth>(tile[local] + r, 8);
  __syncthreads();
  idct_store_agent<BitDepth>(p, t, r, tile[local]);
}

}  // namespace sigpu::prores::cuda
