// Every CUDA runtime call goes through SIGPU_CUDA_CHECK: a failure becomes a CudaError naming
// the call and file:line, never a silent wrong answer.
#pragma once

#include <cuda_runtime.h>

#include <sigpu/core.hpp>
#include <string>

namespace sigpu::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file,
                                          int line) {
  throw CudaError(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                  cudaGetErrorString(err) + ") in " + call + " at " + file + ":" +
                  std::to_string(line));
}

}  // namespace sigpu::cuda

#define SIGPU_CUDA_CHECK(call)                                                \
  do {                                                                        \
    cudaError_t sigpu_err_ = (call);                                          \
    if (sigpu_err_ != cudaSuccess)                                            \
      ::sigpu::cuda::throw_cuda_error(sigpu_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// After a kernel launch: catches bad launch configurations at once.
#define SIGPU_CUDA_CHECK_LAUNCH() SIGPU_CUDA_CHECK(cudaPeekAtLastError())
