// Builds without nvcc: the CUDA NAM batch refuses clearly.
#include <sigpu/nam.hpp>

namespace sigpu::nam {

struct CudaBatch::Impl {};

CudaBatch::CudaBatch(std::span<const Model* const>, const CudaOptions&) {
  throw UnsupportedError("nam: the cuda backend is not available: sigpu was built without CUDA");
}
CudaBatch::~CudaBatch() = default;
CudaBatch::CudaBatch(CudaBatch&&) noexcept = default;
CudaBatch& CudaBatch::operator=(CudaBatch&&) noexcept = default;
int CudaBatch::size() const {
  return 0;
}
int CudaBatch::max_frames() const {
  return 0;
}
float* CudaBatch::device_input(int) const {
  return nullptr;
}
float* CudaBatch::device_output(int) const {
  return nullptr;
}
void CudaBatch::bind(std::span<float* const>, std::span<float* const>) {}
void CudaBatch::process(int, void*) {}
void CudaBatch::process_host(const float* const*, float* const*, int) {}
void* CudaBatch::stream() const {
  return nullptr;
}
void CudaBatch::reset() {}
void CudaBatch::set_size(int, double) noexcept {}

}  // namespace sigpu::nam
