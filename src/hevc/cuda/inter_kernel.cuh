// The inter prediction stage's CUDA kernel: every PU's prediction written into the picture's
// planes, the same samples as inter_stage_cpu. It holds only the tiling; every formula comes
// from inter_sample.hpp, the code the CPU twin runs.
//
// One thread block per PU: its threads take the PU's luma samples, then its chroma samples, in
// raster order, a sample each in turn, and read the reference samples straight from the planes
// (the filter windows of neighbouring threads overlap, so the caches serve most reads).
//
// The kernel is static (one copy per translation unit) and uses nothing of CUDA beyond
// threadIdx and blockIdx, so that a CPU test runs this very code under
// tests/support/cuda_emulation.hpp (tests/hevc/test_inter_stage.cpp).
#pragma once

#include <cstdint>

#include "core/hd.hpp"
#include "hevc/inter_sample.hpp"

namespace sigpu::hevc::cuda {

constexpr int kInterThreads = 256;

/// The kernel's arguments, in device memory (host memory under the emulation).
struct InterArgs {
  PuArrays pu;
  const InterSlice* slices;  ///< indexed by PuRecords::slice
  const RefPicture* refs;    ///< indexed by InterSlice::ref; planes in device memory
  InterParams params;
  InterPlanes out;
};

/// Thread block b predicts PU b.
static __global__ void __launch_bounds__(kInterThreads) inter_kernel(InterArgs a) {
  const PuView pu = a.pu[blockIdx.x];
  const InterSlice& s = a.slices[pu.slice];
  const int comps = a.params.chroma_format == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    const int w = pu_comp_width(pu, c), n = w * pu_comp_height(pu, c);
    for (int k = threadIdx.x; k < n; k += kInterThreads)
      predict_pu_sample(pu, c, k % w, k / w, s, a.refs, a.params, a.out);
  }
}

}  // namespace sigpu::hevc::cuda
