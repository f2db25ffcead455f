// Builds without nvcc: the CUDA convolver refuses clearly.
#include <sigpu/convolution.hpp>

namespace sigpu::convolution {

struct CudaConvolver::Impl {};

CudaConvolver::CudaConvolver(const Config&, int) {
  throw UnsupportedError("the cuda backend is not available: sigpu was built without CUDA");
}
CudaConvolver::~CudaConvolver() = default;
CudaConvolver::CudaConvolver(CudaConvolver&&) noexcept = default;
CudaConvolver& CudaConvolver::operator=(CudaConvolver&&) noexcept = default;
void CudaConvolver::process(const float*, float*, CUstream_st*) {}
void CudaConvolver::reset(CUstream_st*) {}
std::uint32_t CudaConvolver::partition() const {
  return 0;
}
std::uint32_t CudaConvolver::inputs() const {
  return 0;
}
std::uint32_t CudaConvolver::outputs() const {
  return 0;
}
std::size_t CudaConvolver::device_bytes() const {
  return 0;
}

}  // namespace sigpu::convolution
