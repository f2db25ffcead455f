// Builds without nvcc: the CUDA filter refuses clearly.
#include <sigpu/hevc_filter.hpp>

namespace sigpu::hevc_filter {

struct CudaFilter::Impl {};

CudaFilter::CudaFilter(int, void*) {
  throw UnsupportedError("the cuda backend is not available: sigpu was built without CUDA");
}
CudaFilter::~CudaFilter() = default;
CudaFilter::CudaFilter(CudaFilter&&) noexcept = default;
CudaFilter& CudaFilter::operator=(CudaFilter&&) noexcept = default;
void CudaFilter::filter(const PictureInfo&, const Planes&) {}
void CudaFilter::filter_device(const PictureInfo&, const Planes&) {}
std::size_t CudaFilter::staged_bytes(const PictureInfo&) {
  return 0;
}
void CudaFilter::stage(const PictureInfo&, void*) {}
void CudaFilter::filter_staged(const void*, const Planes&) {}
void CudaFilter::upload(const PictureInfo&) {}
void CudaFilter::run(const Planes&) {}
void CudaFilter::synchronize() {}
void* CudaFilter::stream() const {
  return nullptr;
}

}  // namespace sigpu::hevc_filter
