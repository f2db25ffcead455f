// The intra stage's CUDA kernel: the intra transform blocks of one dependency level (IntraOrder)
// predicted, their residual added, into the picture's planes; the same samples as
// intra_stage_cpu. It holds only the tiling; every formula comes from intra_sample.hpp, the code
// the CPU twin runs.
//
// One launch per level, one thread block per transform block of the level. Its threads gather
// the block's 4n + 1 reference samples (substituted) into shared memory, then filter them into a
// second array, then predict the block's samples in raster order, a sample each in turn, and
// write them with the residual added. The blocks of a level neither read nor write each other's
// samples, and the launches of a stream run one after another, so each level finds the samples
// of the lower ones written.
//
// The kernel is static (one copy per translation unit) and uses nothing of CUDA beyond
// threadIdx, blockIdx and __syncthreads, so that a CPU test runs this very code under
// tests/support/cuda_emulation.hpp (tests/hevc/test_intra_stage.cpp).
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "hevc/intra_sample.hpp"

namespace sigpu::hevc::cuda {

/// Two warps: a 4x4 block has 16 samples, a 32x32 one 16 per thread.
constexpr int kIntraThreads = 64;

/// The kernel's arguments, in device memory (host memory under the emulation).
struct IntraArgs {
  IntraArrays tu;
  const std::uint32_t* order;  ///< IntraOrder::tu
  std::uint32_t first;         ///< IntraOrder::begin of the level
  IntraStageParams params;
  ResidualPlanes residual;  ///< the residual stage's planes
  InterPlanes planes;       ///< the picture, read (references) and written
};

/// Thread block b reconstructs the level's block b: order[first + b].
static __global__ void __launch_bounds__(kIntraThreads) intra_kernel(IntraArgs a) {
  __shared__ std::int32_t ref[4 * 32 + 1], filtered[4 * 32 + 1];
  const IntraTu tu = a.tu[a.order[a.first + blockIdx.x]];
  const int c = tu.comp, n = 1 << tu.log2;
  const IntraRefUnits units = intra_ref_units(tu);
  for (int k = threadIdx.x; k <= 4 * n; k += kIntraThreads)
    ref[k] = intra_ref_sample(tu, units, k, a.planes.data[c], a.planes.stride[c],
                              a.params.bit_depth[c ? 1 : 0]);
  __syncthreads();
  const IntraFilter f = intra_filter(tu, a.params, ref);
  for (int k = threadIdx.x; k <= 4 * n; k += kIntraThreads)
    filtered[k] = intra_filtered_ref(ref, k, n, f);
  __syncthreads();
  const IntraBlock b = intra_block(tu, a.params, filtered);
  for (int i = threadIdx.x; i < n * n; i += kIntraThreads)
    intra_write_sample(tu, b, i % n, i / n, a.residual, a.planes);
}

}  // namespace sigpu::hevc::cuda
