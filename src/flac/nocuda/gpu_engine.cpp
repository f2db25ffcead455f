// Builds without nvcc: there is no engine, and asking for one says why.
#include "flac/gpu_engine.hpp"

namespace sigpu::flac {

std::unique_ptr<GpuEngine> GpuEngine::create(int) {
  throw UnsupportedError("the cuda backend is not available: sigpu was built without CUDA");
}

}  // namespace sigpu::flac
