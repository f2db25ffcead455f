// Builds without nvcc: the GPU inter prediction stage refuses clearly.
#include "hevc/inter_gpu.hpp"

#include <sigpu/core.hpp>

namespace sigpu::hevc {

struct CudaInterStage::Impl {};

CudaInterStage::CudaInterStage(void*) {
  throw UnsupportedError(
      "the GPU inter prediction stage is not available: sigpu was built without CUDA");
}
CudaInterStage::~CudaInterStage() = default;
void CudaInterStage::run(const PuRecords&, std::span<const InterSlice>, std::span<const RefPicture>,
                         const InterParams&, int, int, const InterPlanes&) {}
void CudaInterStage::synchronize() {}

}  // namespace sigpu::hevc
