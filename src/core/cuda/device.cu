#include <cuda_runtime.h>

#include <sigpu/core.hpp>

namespace sigpu {

bool cuda_compiled() {
  return true;
}

std::vector<DeviceInfo> cuda_devices() {
  std::vector<DeviceInfo> out;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error so later calls are not affected
    return out;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    out.push_back({i, p.name, p.multiProcessorCount, p.major, p.minor, p.totalGlobalMem});
  }
  return out;
}

}  // namespace sigpu
