// CudaInterStage: the records and tables staged in pinned memory and uploaded in one copy, then
// one launch of the inter kernel on the stage's stream (inter_kernel.cuh holds the kernel).
#include "core/cuda/buffer.hpp"
#include "hevc/cuda/inter_kernel.cuh"
#include "hevc/cuda/record_upload.cuh"
#include "hevc/inter_gpu.hpp"
#include "hevc/inter_stage.hpp"

namespace sigpu::hevc {

struct CudaInterStage::Impl {
  sigpu::cuda::Stream stream;
  cuda::RecordUpload upload;

  explicit Impl(void* given) : stream(given) {}

  void run(const PuRecords& pu, std::span<const InterSlice> slices,
           std::span<const RefPicture> refs, const InterParams& p, int width, int height,
           const InterPlanes& d_out) {
    check_inter_records(pu, slices, static_cast<int>(refs.size()), width, height, p);
    if (pu.size() == 0) return;
    const cuda::HostArray arrays[] = {
        cuda::host_array(pu.x),          cuda::host_array(pu.y),
        cuda::host_array(pu.w),          cuda::host_array(pu.h),
        cuda::host_array(pu.mv),         cuda::host_array(pu.ref_idx),
        cuda::host_array(pu.slice),      {slices.data(), slices.size_bytes()},
        {refs.data(), refs.size_bytes()}};
    cudaStream_t st = stream.get();
    upload.upload(arrays, st);
    cuda::InterArgs a{};
    a.pu = {upload.at<std::uint16_t>(0),
            upload.at<std::uint16_t>(1),
            upload.at(2),
            upload.at(3),
            upload.at<std::int16_t>(4),
            upload.at<std::int8_t>(5),
            upload.at<std::uint16_t>(6)};
    a.slices = upload.at<InterSlice>(7);
    a.refs = upload.at<RefPicture>(8);
    a.params = p;
    a.out = d_out;
    cuda::inter_kernel<<<static_cast<unsigned>(pu.size()), cuda::kInterThreads, 0, st>>>(a);
    SIGPU_CUDA_CHECK_LAUNCH();
  }
};

CudaInterStage::CudaInterStage(void* stream) : impl_(std::make_unique<Impl>(stream)) {}
CudaInterStage::~CudaInterStage() = default;

void CudaInterStage::run(const PuRecords& pu, std::span<const InterSlice> slices,
                         std::span<const RefPicture> refs, const InterParams& p, int width,
                         int height, const InterPlanes& d_out) {
  impl_->run(pu, slices, refs, p, width, height, d_out);
}

void CudaInterStage::synchronize() {
  impl_->stream.synchronize();
}

}  // namespace sigpu::hevc
