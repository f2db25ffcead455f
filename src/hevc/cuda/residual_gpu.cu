// CudaResidualStage: the records staged in pinned memory and uploaded in one copy, then one
// launch of the residual kernel on the stage's stream (residual_kernel.cuh holds the kernel).
#include <cstring>

#include "core/cuda/buffer.hpp"
#include "hevc/cuda/record_upload.cuh"
#include "hevc/cuda/residual_kernel.cuh"
#include "hevc/residual_gpu.hpp"
#include "hevc/residual_stage.hpp"

namespace sigpu::hevc {

struct CudaResidualStage::Impl {
  sigpu::cuda::Stream stream;
  cuda::RecordUpload upload;
  sigpu::cuda::DeviceBuffer<TransformMatrices> matrices;
  TuOrder order;

  explicit Impl(void* given) : stream(given), matrices(1) {
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(matrices.get(), &kTransformMatrices, sizeof(TransformMatrices),
                                     cudaMemcpyHostToDevice, stream.get()));
  }

  void run(const PictureRecords& rec, const ResidualParams& p, const ResidualPlanes& d_out) {
    order_coded_tus(rec.tu, order);
    cuda::ResidualArgs a{};
    std::memcpy(a.order_begin, order.begin, sizeof order.begin);
    cuda::residual_tiles(a.order_begin, a.tile_begin);
    if (a.tile_begin[4] == 0) return;

    // Every array the kernel reads, in one copy.
    const TuRecords& tu = rec.tu;
    using cuda::host_array;
    const cuda::HostArray arrays[] = {
        host_array(tu.x),           host_array(tu.y),
        host_array(tu.log2),        host_array(tu.comp),
        host_array(tu.mode),        host_array(tu.qp),
        host_array(tu.flags),       host_array(tu.cols),
        host_array(tu.rows),        host_array(tu.coeff_begin),
        host_array(tu.coeff_count), host_array(rec.coeffs),
        host_array(order.tu),       {p.scaling, p.scaling ? std::size_t{kScalingFactorBytes} : 0}};
    cudaStream_t st = stream.get();
    upload.upload(arrays, st);
    const auto& u = upload;
    using std::uint16_t, std::uint32_t;
    a.tu = {u.at<uint16_t>(0), u.at<uint16_t>(1), u.at(2),           u.at(3),
            u.at(4),           u.at(5),           u.at(6),           u.at(7),
            u.at(8),           u.at<uint32_t>(9), u.at<uint16_t>(10)};
    a.coeffs = u.at<uint32_t>(11);
    a.order = u.at<uint32_t>(12);
    a.params = p;
    a.params.scaling = p.scaling ? u.at(13) : nullptr;
    a.matrices = matrices.get();
    a.out = d_out;
    cuda::residual_kernel<<<a.tile_begin[4], cuda::kResidualThreads, 0, st>>>(a);
    SIGPU_CUDA_CHECK_LAUNCH();
  }
};

CudaResidualStage::CudaResidualStage(void* stream) : impl_(std::make_unique<Impl>(stream)) {}
CudaResidualStage::~CudaResidualStage() = default;

void CudaResidualStage::run(const PictureRecords& rec, const ResidualParams& p,
                            const ResidualPlanes& d_out) {
  impl_->run(rec, p, d_out);
}

void CudaResidualStage::synchronize() {
  impl_->stream.synchronize();
}

}  // namespace sigpu::hevc
