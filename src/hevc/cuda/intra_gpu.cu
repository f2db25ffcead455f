// CudaIntraStage: the records and the level order staged in pinned memory and uploaded in one
// copy, then one launch of the intra kernel per level, on the caller's stream
// (intra_kernel.cuh holds the kernel).
#include "core/cuda/buffer.hpp"
#include "hevc/cuda/intra_kernel.cuh"
#include "hevc/cuda/record_upload.cuh"
#include "hevc/intra_gpu.hpp"

namespace sigpu::hevc {

struct CudaIntraStage::Impl {
  explicit Impl(cudaStream_t s) : stream(s) {}

  cudaStream_t stream;
  cuda::RecordUpload upload;

  void run(const TuRecords& tu, const IntraOrder& order, const IntraStageParams& p,
           const ResidualPlanes& d_residual, const InterPlanes& d_planes) {
    if (order.tu.empty()) return;
    using cuda::host_array;
    const cuda::HostArray arrays[] = {
        host_array(tu.x),    host_array(tu.y),     host_array(tu.log2),  host_array(tu.comp),
        host_array(tu.mode), host_array(tu.flags), host_array(tu.avail), host_array(order.tu)};
    upload.upload(arrays, stream);
    cuda::IntraArgs a{};
    const auto& u = upload;
    a.tu = {u.at<std::uint16_t>(0), u.at<std::uint16_t>(1), u.at(2), u.at(3), u.at(4), u.at(5),
            u.at<std::uint32_t>(6)};
    a.order = u.at<std::uint32_t>(7);
    a.params = p;
    a.residual = d_residual;
    a.planes = d_planes;
    for (std::size_t l = 0; l < order.levels(); ++l) {
      a.first = order.begin[l];
      const unsigned blocks = order.begin[l + 1] - order.begin[l];
      cuda::intra_kernel<<<blocks, cuda::kIntraThreads, 0, stream>>>(a);
      SIGPU_CUDA_CHECK_LAUNCH();
    }
  }
};

CudaIntraStage::CudaIntraStage(void* stream)
    : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(stream))) {}
CudaIntraStage::~CudaIntraStage() = default;

void CudaIntraStage::run(const TuRecords& tu, const IntraOrder& order, const IntraStageParams& p,
                         const ResidualPlanes& d_residual, const InterPlanes& d_planes) {
  impl_->run(tu, order, p, d_residual, d_planes);
}

}  // namespace sigpu::hevc
