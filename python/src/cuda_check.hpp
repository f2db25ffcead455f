// The extension's CUDA calls, checked: a failure is a sigpu::CudaError naming the call.
#pragma once

#if SIGPU_HAVE_CUDA
#include <cuda_runtime.h>

#include <sigpu/core.hpp>

#include <string>

namespace sigpu::python {

inline void cuda_check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw CudaError(std::string(call) + ": " + cudaGetErrorString(e));
}

}  // namespace sigpu::python

#define PY_CUDA_CHECK(call) ::sigpu::python::cuda_check(call, #call)
#endif
