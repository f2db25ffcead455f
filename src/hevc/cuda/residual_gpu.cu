// CudaResidualStage: the records staged in pinned memory and uploaded in one copy, then one
// launch of the residual kernel on the stage's stream (residual_kernel.cuh holds the kernel).
#include <cstring>

#include "core/cuda/buffer.hpp"
#include "hevc/cuda/residual_kernel.cuh"
#include "hevc/residual_gpu.hpp"
#include "hevc/residual_stage.hpp"

namespace sigpu::hevc {

namespace {

constexpr std::size_t align_up(std::size_t n) {
  return (n + 255) & ~std::size_t(255);
}

}  // namespace

struct CudaResidualStage::Impl {
  sigpu::cuda::Stream stream;
  /// The last upload has left the staging buffer (blocking, not spinning: the caller's cores
  /// parse beside it).
  cudaEvent_t staged{};
  sigpu::cuda::DeviceBuffer<TransformMatrices> matrices;
  sigpu::cuda::PinnedBuffer<std::uint8_t> staging;
  sigpu::cuda::DeviceBuffer<std::uint8_t> records;
  TuOrder order;

  Impl() : matrices(1) {
    SIGPU_CUDA_CHECK(
        cudaEventCreateWithFlags(&staged, cudaEventDisableTiming | cudaEventBlockingSync));
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(matrices.get(), &kTransformMatrices, sizeof(TransformMatrices),
                                     cudaMemcpyHostToDevice, stream.get()));
  }
  ~Impl() { cudaEventDestroy(staged); }

  void run(const PictureRecords& rec, const ResidualParams& p, const ResidualPlanes& d_out) {
    order_coded_tus(rec.tu, order);
    cuda::ResidualArgs a{};
    std::memcpy(a.order_begin, order.begin, sizeof order.begin);
    cuda::residual_tiles(a.order_begin, a.tile_begin);
    if (a.tile_begin[4] == 0) return;

    // Every array the kernel reads, each 256-byte aligned in one buffer, so one copy moves them.
    const TuRecords& tu = rec.tu;
    struct Piece {
      const void* host;
      std::size_t bytes;
      std::size_t at = 0;
    };
    auto bytes = [](const auto& v) { return v.size() * sizeof(v[0]); };
    Piece pieces[] = {{tu.x.data(), bytes(tu.x)},
                      {tu.y.data(), bytes(tu.y)},
                      {tu.log2.data(), bytes(tu.log2)},
                      {tu.comp.data(), bytes(tu.comp)},
                      {tu.mode.data(), bytes(tu.mode)},
                      {tu.qp.data(), bytes(tu.qp)},
                      {tu.flags.data(), bytes(tu.flags)},
                      {tu.cols.data(), bytes(tu.cols)},
                      {tu.rows.data(), bytes(tu.rows)},
                      {tu.coeff_begin.data(), bytes(tu.coeff_begin)},
                      {tu.coeff_count.data(), bytes(tu.coeff_count)},
                      {rec.coeffs.data(), bytes(rec.coeffs)},
                      {order.tu.data(), bytes(order.tu)},
                      {p.scaling, p.scaling ? std::size_t{kScalingFactorBytes} : 0}};
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
    auto u8 = [&](int k) { return reinterpret_cast<const std::uint8_t*>(at(k)); };
    auto u16 = [&](int k) { return reinterpret_cast<const std::uint16_t*>(at(k)); };
    auto u32 = [&](int k) { return reinterpret_cast<const std::uint32_t*>(at(k)); };
    a.tu = {u16(0), u16(1), u8(2), u8(3), u8(4), u8(5), u8(6), u8(7), u8(8), u32(9), u16(10)};
    a.coeffs = u32(11);
    a.order = u32(12);
    a.params = p;
    a.params.scaling = p.scaling ? u8(13) : nullptr;
    a.matrices = matrices.get();
    a.out = d_out;
    cuda::residual_kernel<<<a.tile_begin[4], cuda::kResidualThreads, 0, st>>>(a);
    SIGPU_CUDA_CHECK_LAUNCH();
  }
};

CudaResidualStage::CudaResidualStage() : impl_(std::make_unique<Impl>()) {}
CudaResidualStage::~CudaResidualStage() = default;

void CudaResidualStage::run(const PictureRecords& rec, const ResidualParams& p,
                            const ResidualPlanes& d_out) {
  impl_->run(rec, p, d_out);
}

void CudaResidualStage::synchronize() {
  impl_->stream.synchronize();
}

}  // namespace sigpu::hevc
