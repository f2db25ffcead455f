// Builds without nvcc: the CUDA audio backend refuses clearly.
#include <sigpu/core.hpp>

#include "audio/runner.hpp"

namespace sigpu::audio {

std::unique_ptr<Runner> make_cuda_runner(Plan&) {
  throw UnsupportedError("the cuda backend is not available: sigpu was built without CUDA");
}

}  // namespace sigpu::audio
