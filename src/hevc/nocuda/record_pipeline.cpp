// Builds without nvcc: the GPU record pipeline refuses clearly.
#include <sigpu/core.hpp>

#include "hevc/record_plan.hpp"

namespace sigpu::hevc {

std::unique_ptr<RecordPipeline> make_cuda_record_pipeline() {
  throw UnsupportedError(
      "HEVC reconstruction on the GPU is not available: sigpu was built without CUDA");
}

}  // namespace sigpu::hevc
