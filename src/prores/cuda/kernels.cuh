// The CUDA ProRes kernels, thin wrappers around kernel_agents.hpp. VldKernel: one thread per
// slice and component. IdctKernel: one coefficient tile of 32 8x8 blocks per thread block:
// a contiguous 4 KB load into raster blocks in shared memory, eight threads per block (one
// row, then one column each), then one 16-byte row piece per thread, re-paired so that a
// warp's stores are contiguous.
#pragma once

#include <cstdint>

#include "prores/kernel_agents.hpp"

namespace sigpu::prores::cuda {

/// Scan tables: progressive, then interlaced.
__constant__ std::uint8_t c_scan[2 * 64];

inline constexpr int kVldThreads = 128;

__global__ void __launch_bounds__(kVldThreads) VldKernel(VldParams p) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t < p.total_slices * p.layout.planes) vld_agent(p, t);
}

inline constexpr int kIdctThreads = 8 * kTileBlocks;

/// Grid: (tiles per frame, frames); a thread block transforms one tile of 32 blocks.
template <int BitDepth>
__global__ void __launch_bounds__(kIdctThreads) IdctKernel(IdctParams p) {
  // Lanes index the scan table by their own coefficient positions: from shared memory these
  // loads do not serialise as divergent constant-memory reads do.
  __shared__ std::uint8_t scan[64];
  __shared__ __align__(16) IdctTile tile;
  static_assert(kIdctThreads >= 64);
  if (threadIdx.x < 64) scan[threadIdx.x] = c_scan[64 * p.layout.shape.interlaced + threadIdx.x];
  const int frame = static_cast<int>(blockIdx.y);
  int plane;
  std::int64_t in_plane;
  idct_tile(p.layout, blockIdx.x, plane, in_plane);
  const std::int64_t first = in_plane * kTileBlocks;
  const int thread = static_cast<int>(threadIdx.x);
  __syncthreads();
  if (plane < 3) idct_load_agent(p, frame, plane, in_plane, thread, scan, tile);
  __syncthreads();
  const int local = thread >> 3, r = thread & 7;
  const IdctTask t = idct_task(p, frame, plane, first + local);
  if (t.coded) idct_row_agent<BitDepth>(p, t, r, tile[local] + 8 * r);
  __syncthreads();
  if (t.coded) idct_col<BitDepth>(tile[local] + r, 8);
  __syncthreads();
  int block, row;
  idct_store_slot(plane, p.layout.shape.chroma444, thread, block, row);
  idct_store_agent<BitDepth>(p, idct_task(p, frame, plane, first + block), row,
                             tile[block] + 8 * row);
}

}  // namespace sigpu::prores::cuda
