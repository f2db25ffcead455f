// Builds without nvcc: the GPU residual stage refuses clearly.
#include "hevc/residual_gpu.hpp"

#include <sigpu/core.hpp>

namespace sigpu::hevc {

struct CudaResidualStage::Impl {};

CudaResidualStage::CudaResidualStage(void*) {
  throw UnsupportedError("the GPU residual stage is not available: sigpu was built without CUDA");
}
CudaResidualStage::~CudaResidualStage() = default;
void CudaResidualStage::run(const PictureRecords&, const ResidualParams&, const ResidualPlanes&) {}
void CudaResidualStage::synchronize() {}

}  // namespace sigpu::hevc
