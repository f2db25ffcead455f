// CudaInterStage: the records and tables staged in pinned memory and uploaded in one copy, then
// one launch of the inter kernel on the stage's stream (inter_kernel.cuh holds the kernel).
#include <cstring>

#include "core/cuda/buffer.hpp"
#include "hevc/cuda/inter_kernel.cuh"
#include "hevc/inter_gpu.hpp"
#include "hevc/inter_stage.hpp"

namespace sigpu::hevc {

namespace {

constexpr std::size_t align_up(std::size_t n) {
  return (n + 255) & ~std::size_t(255);
}

}  // namespace

struct CudaInterStage::Impl {
  sigpu::cuda::Stream stream;
  /// The last upload has left the staging buffer.
  cudaEvent_t staged{};
  sigpu::cuda::PinnedBuffer<std::uint8_t> staging;
  sigpu::cuda::DeviceBuffer<std::uint8_t> records;

  Impl() {
    SIGPU_CUDA_CHECK(
        cudaEventCreateWithFlags(&staged, cudaEventDisableTiming | cudaEventBlockingSync));
  }
  ~Impl() { cudaEventDestroy(staged); }

  void run(const PuRecords& pu, std::span<const InterSlice> slices,
           std::span<const RefPicture> refs, const InterParams& p, int width, int height,
           const InterPlanes& d_out) {
    check_inter_records(pu, slices, static_cast<int>(refs.size()), width, height, p);
    if (pu.size() == 0) return;
    struct Piece {
      const void* host;
      std::size_t bytes;
      std::size_t at = 0;
    };
    auto bytes = [](const auto& v) { return v.size() * sizeof(v[0]); };
    Piece pieces[] = {{pu.x.data(), bytes(pu.x)},         {pu.y.data(), bytes(pu.y)},
                      {pu.w.data(), bytes(pu.w)},         {pu.h.data(), bytes(pu.h)},
                      {pu.mv.data(), bytes(pu.mv)},       {pu.ref_idx.data(), bytes(pu.ref_idx)},
                      {pu.slice.data(), bytes(pu.slice)}, {slices.data(), slices.size_bytes()},
                      {refs.data(), refs.size_bytes()}};
    std::size_t total = 0;
    for (Piece& piece : pieces) {
      piece.at = total;
      total += align_up(piece.bytes);
    }
    // The previous picture's upload may still be reading the staging buffer.
    SIGPU_CUDA_CHECK(cudaEventSynchronize(staged));
    staging.reserve(total);
    records.reserve(total);
    for (const Piece& piece : pieces)
      if (piece.bytes) std::memcpy(staging.get() + piece.at, piece.host, piece.bytes);
    cudaStream_t st = stream.get();
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(records.get(), staging.get(), total, cudaMemcpyHostToDevice, st));
    SIGPU_CUDA_CHECK(cudaEventRecord(staged, st));

    auto at = [&](int k) { return records.get() + pieces[k].at; };
    cuda::InterArgs a{};
    a.pu = {reinterpret_cast<const std::uint16_t*>(at(0)),
            reinterpret_cast<const std::uint16_t*>(at(1)),
            at(2),
            at(3),
            reinterpret_cast<const std::int16_t*>(at(4)),
            reinterpret_cast<const std::int8_t*>(at(5)),
            reinterpret_cast<const std::uint16_t*>(at(6))};
    a.slices = reinterpret_cast<const InterSlice*>(at(7));
    a.refs = reinterpret_cast<const RefPicture*>(at(8));
    a.params = p;
    a.out = d_out;
    cuda::inter_kernel<<<static_cast<unsigned>(pu.size()), cuda::kInterThreads, 0, st>>>(a);
    SIGPU_CUDA_CHECK_LAUNCH();
  }
};

CudaInterStage::CudaInterStage() : impl_(std::make_unique<Impl>()) {}
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
