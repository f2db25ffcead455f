// Builds without nvcc: the GPU intra stage refuses clearly.
#include "hevc/intra_gpu.hpp"

#include <sigpu/core.hpp>

namespace sigpu::hevc {

struct CudaIntraStage::Impl {};

CudaIntraStage::CudaIntraStage(void*) {
  throw UnsupportedError("the GPU intra stage is not available: sigpu was built without CUDA");
}
CudaIntraStage::~CudaIntraStage() = default;
void CudaIntraStage::run(const TuRecords&, const IntraOrder&, const IntraStageParams&,
                         const ResidualPlanes&, const InterPlanes&) {}

}  // namespace sigpu::hevc
