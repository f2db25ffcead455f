// The assembly stage's CUDA kernel: one thread block per job of an AssembleOrder, its threads
// taking the job's samples in turn; every formula is assemble_job's (assemble_stage.hpp), the
// code the CPU twin runs. Static and plain (threadIdx and blockIdx only), so that a CPU test runs
// this very code under tests/support/cuda_emulation.hpp.
#pragma once

#include "hevc/assemble_stage.hpp"

namespace sigpu::hevc::cuda {

constexpr int kAssembleThreads = 256;

static __global__ void __launch_bounds__(kAssembleThreads) assemble_kernel(AssembleArgs a) {
  assemble_job(a, blockIdx.x, threadIdx.x, kAssembleThreads);
}

}  // namespace sigpu::hevc::cuda
