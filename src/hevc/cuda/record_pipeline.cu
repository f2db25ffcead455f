// The record pipeline on the GPU: every stage of a picture queued on one stream in decoding
// order (record_pipeline.hpp), the work planes and residual in device memory.
#include <mutex>
#include <vector>

#include "core/cuda/buffer.hpp"
#include "hevc/cuda/assemble_kernel.cuh"
#include "hevc/cuda/record_upload.cuh"
#include "hevc/filters.hpp"
#include "hevc/inter_gpu.hpp"
#include "hevc/intra_gpu.hpp"
#include "hevc/record_plan.hpp"
#include "hevc/residual_gpu.hpp"

namespace sigpu::hevc {
namespace {

// Events that say a picture is done, recycled; the waiting thread blocks instead of spinning
// (the parsing threads need the cores).
class EventPool {
 public:
  ~EventPool() {
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
  }
  cudaEvent_t take() {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        cudaEvent_t e = free_.back();
        free_.pop_back();
        return e;
      }
    }
    cudaEvent_t e{};
    SIGPU_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync));
    return e;
  }
  void give(cudaEvent_t e) {
    std::lock_guard lock(mutex_);
    free_.push_back(e);
  }

 private:
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_;
};

// The assembly stage's arrays in one upload, then its kernel.
void assemble(cuda::RecordUpload& upload, const PictureRecords& rec, const AssembleOrder& order,
              const AssembleParams& p, const ResidualPlanes& res, const InterPlanes& out,
              cudaStream_t st) {
  if (order.jobs.empty()) return;
  using cuda::host_array;
  const cuda::HostArray arrays[] = {host_array(rec.tu.x),    host_array(rec.tu.y),
                                    host_array(rec.tu.log2), host_array(rec.tu.comp),
                                    host_array(rec.cu.x),    host_array(rec.cu.y),
                                    host_array(rec.cu.log2), host_array(rec.cu.pcm_begin),
                                    host_array(rec.pcm),     host_array(order.jobs)};
  upload.upload(arrays, st);
  const auto& u = upload;
  using std::uint16_t, std::uint32_t;
  const AssembleArgs a{u.at<uint16_t>(0),
                       u.at<uint16_t>(1),
                       u.at(2),
                       u.at(3),
                       u.at<uint16_t>(4),
                       u.at<uint16_t>(5),
                       u.at(6),
                       u.at<uint32_t>(7),
                       u.at<uint16_t>(8),
                       u.at<uint32_t>(9),
                       order.tus,
                       order.pcms,
                       p,
                       res,
                       out};
  cuda::
      assemble_kernel<<<static_cast<unsigned>(order.jobs.size()), cuda::kAssembleThreads, 0, st>>>(
          a);
  SIGPU_CUDA_CHECK_LAUNCH();
}

class CudaRecordPipeline final : public RecordPipeline {
 public:
  CudaRecordPipeline() : inter_(stream_.get()), residual_(stream_.get()), intra_(stream_.get()) {}
  ~CudaRecordPipeline() override { cudaStreamSynchronize(stream_.get()); }

  Memory memory() const override { return Memory::device; }

  std::function<void()> run(const RecordWork& w, const RecordPlan& plan) override {
    SIGPU_CUDA_CHECK(cudaSetDevice(0));
    DecodedPicture& pic = *w.pic;
    const std::size_t samples = DecodedPicture::samples(*pic.sps);
    cudaStream_t st = stream_.get();
    if (w.reconstructed) {
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(pic.work_store->data(), pic.store->data(),
                                       samples * sizeof(std::uint16_t), cudaMemcpyHostToDevice,
                                       st));
    } else {
      residual_planes_.reserve(samples);
      const ResidualPlanes res = residual_planes(pic, residual_planes_.get());
      inter_.run(pic.records.pu, plan.slices, plan.refs, plan.inter, pic.sps->width,
                 pic.sps->height, plan.work);
      residual_.run(pic.records, plan.residual, res);
      assemble(upload_, pic.records, plan.assembly, plan.assemble, res, plan.work, st);
      intra_.run(pic.records.tu, plan.intra, plan.intra_params, res, plan.work);
    }
    if (w.filter) filters_.apply_work(pic, Backend::cuda, st, w.filter_side);
    if (w.output)
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(pic.store->data(), pic.work_store->data(),
                                       samples * sizeof(std::uint16_t), cudaMemcpyDeviceToHost,
                                       st));
    cudaEvent_t done = events_.take();
    SIGPU_CUDA_CHECK(cudaEventRecord(done, st));
    return [this, done] {
      const cudaError_t e = cudaEventSynchronize(done);
      events_.give(done);
      SIGPU_CUDA_CHECK(e);
    };
  }

  void grey(DecodedPicture& pic) override {
    SIGPU_CUDA_CHECK(cudaSetDevice(0));
    const Sps& s = *pic.sps;
    AssembleOrder all;
    const int ctbs = s.width_ctbs() * s.height_ctbs();
    for (int rs = 0; rs < ctbs; ++rs) all.jobs.push_back(static_cast<std::uint32_t>(rs));
    std::lock_guard lock(grey_mutex_);
    assemble(grey_upload_, PictureRecords{}, all, assemble_params(pic), {}, work_view(pic),
             stream_.get());
  }

 private:
  sigpu::cuda::Stream stream_;
  CudaInterStage inter_;
  CudaResidualStage residual_;
  CudaIntraStage intra_;
  cuda::RecordUpload upload_;
  std::mutex grey_mutex_;
  cuda::RecordUpload grey_upload_;
  sigpu::cuda::DeviceBuffer<std::int16_t> residual_planes_;
  FilterRunner filters_;
  EventPool events_;
};

}  // namespace

std::unique_ptr<RecordPipeline> make_cuda_record_pipeline() {
  return std::make_unique<CudaRecordPipeline>();
}

}  // namespace sigpu::hevc
