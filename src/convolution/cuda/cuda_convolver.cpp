// The CUDA backend's host side: device memory and cuFFT plans made once, IR spectra computed
// on the device, and the period as six stream operations (stage input, batched R2C over the
// inputs, push into the delay lines, multiply-accumulate over every path and partition,
// batched C2R over the outputs, overlap-save discard + wet/dry), none of which allocates or
// synchronises, so the sequence can be captured into a CUDA graph.
#include <cufft.h>

#include <algorithm>
#include <string>
#include <utility>

#include <sigpu/convolution.hpp>

#include "convolution/cuda/kernels.cuh"
#include "convolution/layout.hpp"
#include "core/cuda/buffer.hpp"

namespace sigpu::convolution {

namespace {

using sigpu::cuda::DeviceBuffer;

void check_cufft(cufftResult r, const char* call) {
  if (r != CUFFT_SUCCESS)
    throw CudaError("convolution: cuFFT error " + std::to_string(static_cast<int>(r)) + " in " +
                    call);
}

/// A batched 1-D real transform of size n over `batch` contiguous signals.
class FftPlan {
 public:
  FftPlan(int n, cufftType type, int batch) {
    check_cufft(cufftCreate(&plan_), "cufftCreate");
    check_cufft(cufftMakePlan1d(plan_, n, type, batch, &work_), "cufftMakePlan1d");
  }
  ~FftPlan() {
    if (plan_) cufftDestroy(plan_);
  }
  FftPlan(FftPlan&& o) noexcept
      : plan_(std::exchange(o.plan_, 0)), work_(std::exchange(o.work_, 0)) {}
  FftPlan& operator=(FftPlan&&) = delete;
  cufftHandle get(cudaStream_t stream) const {
    check_cufft(cufftSetStream(plan_, stream), "cufftSetStream");
    return plan_;
  }
  std::size_t work_bytes() const { return work_; }

 private:
  cufftHandle plan_ = 0;
  std::size_t work_ = 0;
};

template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& host) {
  DeviceBuffer<T> d(host.size());
  SIGPU_CUDA_CHECK(
      cudaMemcpy(d.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

struct CudaConvolver::Impl {
  Layout L;    // first: a bad config is refused before the device is touched
  int device;  // made current before any allocation or plan
  float wet = 1, dry = 0;
  cuda::MacShape shape;
  DeviceBuffer<float> window, result;
  DeviceBuffer<float2> current, ring, spectra, y;
  DeviceBuffer<std::uint64_t> count;
  DeviceBuffer<std::uint32_t> output_begin, ir_partitions, ring_slots;
  DeviceBuffer<std::uint64_t> ir_offset, ring_offset;
  DeviceBuffer<Term> terms;
  cuda::DeviceTables tables;
  FftPlan r2c, c2r;
  std::size_t bytes = 0;

  Impl(const Config& c, int dev)
      : L(make_layout(c)),
        device(select(dev)),
        wet(c.wet),
        dry(c.dry),
        r2c(static_cast<int>(L.fft_size), CUFFT_R2C, static_cast<int>(L.inputs)),
        c2r(static_cast<int>(L.fft_size), CUFFT_C2R, static_cast<int>(L.outputs)) {
    shape = cuda::mac_shape(L.bins, L.max_partitions);
    window.reserve(std::size_t{L.inputs} * L.fft_size);
    result.reserve(std::size_t{L.outputs} * L.fft_size);
    current.reserve(std::size_t{L.inputs} * L.bins);
    ring.reserve(L.ring_spectra() * L.bins);
    spectra.reserve(L.ir_spectra() * L.bins);
    y.reserve(std::size_t{L.outputs} * L.bins);
    count.reserve(1);
    output_begin = upload(L.output_begin);
    ir_partitions = upload(L.ir_partitions);
    ring_slots = upload(L.ring_slots);
    ir_offset = upload(L.ir_offset);
    ring_offset = upload(L.ring_offset);
    terms = upload(L.terms);
    tables = {output_begin.get(), terms.get(),      ir_partitions.get(),
              ir_offset.get(),    ring_slots.get(), ring_offset.get()};
    bytes = (window.capacity() + result.capacity()) * sizeof(float) +
            (current.capacity() + ring.capacity() + spectra.capacity() + y.capacity()) *
                sizeof(float2) +
            r2c.work_bytes() + c2r.work_bytes();
    compute_ir_spectra(c);
    clear(nullptr);
    SIGPU_CUDA_CHECK(cudaDeviceSynchronize());
  }

  static int select(int device) {
    SIGPU_CUDA_CHECK(cudaSetDevice(device));
    return device;
  }

  // Chunks of partitions: pad on the device, one batched R2C, copy into place.
  void compute_ir_spectra(const Config& c) {
    const std::uint32_t B = L.partition;
    const std::uint32_t chunk = std::max(1u, std::min(L.max_partitions, (1u << 22) / L.fft_size));
    std::size_t max_taps = 0;
    for (const auto& ir : c.irs) max_taps = std::max(max_taps, ir.size());
    DeviceBuffer<float> taps(max_taps), frames(std::size_t{chunk} * L.fft_size);
    DeviceBuffer<float2> out(std::size_t{chunk} * L.bins);
    SIGPU_CUDA_CHECK(cudaMemset(frames.get(), 0, std::size_t{chunk} * L.fft_size * 4));
    const FftPlan plan(static_cast<int>(L.fft_size), CUFFT_R2C, static_cast<int>(chunk));
    const float scale = 1.0f / static_cast<float>(L.fft_size);  // the inverse FFT's 1 / N
    for (std::uint32_t ir = 0; ir < c.irs.size(); ++ir) {
      const auto& h = c.irs[ir];
      SIGPU_CUDA_CHECK(cudaMemcpy(taps.get(), h.data(), h.size() * 4, cudaMemcpyHostToDevice));
      for (std::uint32_t first = 0; first < L.ir_partitions[ir]; first += chunk) {
        const std::uint32_t n = std::min(chunk, L.ir_partitions[ir] - first);
        cuda::launch_pad_partitions(frames.get(), taps.get(), h.size(), first, n, B, scale,
                                    nullptr);
        check_cufft(cufftExecR2C(plan.get(nullptr), frames.get(),
                                 reinterpret_cast<cufftComplex*>(out.get())),
                    "cufftExecR2C");
        SIGPU_CUDA_CHECK(cudaMemcpyAsync(spectra.get() + (L.ir_offset[ir] + first) * L.bins,
                                         out.get(), std::size_t{n} * L.bins * sizeof(float2),
                                         cudaMemcpyDeviceToDevice, nullptr));
      }
    }
    SIGPU_CUDA_CHECK(cudaDeviceSynchronize());  // before taps, frames and out are freed
  }

  void clear(cudaStream_t stream) {
    SIGPU_CUDA_CHECK(cudaMemsetAsync(window.get(), 0,
                                     std::size_t{L.inputs} * L.fft_size * sizeof(float), stream));
    SIGPU_CUDA_CHECK(
        cudaMemsetAsync(ring.get(), 0, L.ring_spectra() * L.bins * sizeof(float2), stream));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(std::uint64_t), stream));
  }

  void process(const float* d_in, float* d_out, cudaStream_t stream) {
    cuda::launch_stage_input(window.get(), d_in, L.inputs, L.partition, stream);
    check_cufft(
        cufftExecR2C(r2c.get(stream), window.get(), reinterpret_cast<cufftComplex*>(current.get())),
        "cufftExecR2C");
    cuda::launch_push_spectra(ring.get(), current.get(), tables, count.get(), L.inputs, L.bins,
                              stream);
    cuda::launch_mac(y.get(), ring.get(), spectra.get(), tables, count.get(), L.outputs, L.bins,
                     shape, stream);
    check_cufft(
        cufftExecC2R(c2r.get(stream), reinterpret_cast<cufftComplex*>(y.get()), result.get()),
        "cufftExecC2R");
    cuda::launch_finish(d_out, result.get(), window.get(), wet, dry, L.outputs, L.partition,
                        count.get(), stream);
  }
};

CudaConvolver::CudaConvolver(const Config& config, int device)
    : impl_(std::make_unique<Impl>(config, device)) {}
CudaConvolver::~CudaConvolver() = default;
CudaConvolver::CudaConvolver(CudaConvolver&&) noexcept = default;
CudaConvolver& CudaConvolver::operator=(CudaConvolver&&) noexcept = default;

void CudaConvolver::process(const float* d_in, float* d_out, CUstream_st* stream) {
  impl_->process(d_in, d_out, stream);
}
void CudaConvolver::reset(CUstream_st* stream) {
  impl_->clear(stream);
}
std::uint32_t CudaConvolver::partition() const {
  return impl_->L.partition;
}
std::uint32_t CudaConvolver::inputs() const {
  return impl_->L.inputs;
}
std::uint32_t CudaConvolver::outputs() const {
  return impl_->L.outputs;
}
std::size_t CudaConvolver::device_bytes() const {
  return impl_->bytes;
}

}  // namespace sigpu::convolution
