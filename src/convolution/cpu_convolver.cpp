// The CPU backend: FFTW split-format transforms (so the multiply-accumulate loop is plain
// vector arithmetic) and the layout shared with the GPU. A period runs in two phases, each split
// over the pool: inputs (shift the overlap-save window, forward FFT into the delay line), then
// outputs (sum every path's partitions, inverse FFT, keep the valid half, wet/dry). The pool is
// the real-time one (core/rt_pool.hpp): its workers spin between periods, so a period's two
// hand-offs cost no scheduler wake-up.
#include <fftw3.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

#include <sigpu/convolution.hpp>

#include "convolution/cpu_mac.hpp"
#include "convolution/layout.hpp"
#include "convolution/spectral.hpp"
#include "core/no_denormals.hpp"
#include "core/rt_pool.hpp"

namespace sigpu::convolution {

namespace {

// FFTW's planner is not thread-safe; executing plans is.
std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

struct FftwFree {
  void operator()(float* p) const { fftwf_free(p); }
};
using FloatArray = std::unique_ptr<float[], FftwFree>;

FloatArray allocate(std::size_t n) {
  auto* p = static_cast<float*>(fftwf_malloc(std::max<std::size_t>(n, 1) * sizeof(float)));
  if (!p) throw Error("convolution: out of memory (" + std::to_string(n * 4) + " bytes)");
  std::memset(p, 0, n * sizeof(float));
  return FloatArray(p);
}

struct Plan {
  fftwf_plan p = nullptr;
  Plan() = default;
  explicit Plan(fftwf_plan plan) : p(plan) {
    if (!p) throw Error("convolution: FFTW could not make a plan");
  }
  Plan(Plan&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
  Plan& operator=(Plan&& o) noexcept {
    std::swap(p, o.p);
    return *this;
  }
  ~Plan() {
    if (p) {
      std::lock_guard lock(planner_mutex());
      fftwf_destroy_plan(p);
    }
  }
};

}  // namespace

struct CpuConvolver::Impl {
  Layout L;
  std::size_t stride = 0;  ///< floats per re or im half of a spectrum (bins rounded up)
  float wet = 1, dry = 0;
  std::unique_ptr<RtPool> pool;  ///< null: serial
  FloatArray window;             ///< [inputs][2B] overlap-save input windows
  FloatArray ring;               ///< per input, ring_slots spectra of 2 * stride
  FloatArray spectra;            ///< per IR, its partitions' spectra (scaled by 1 / 2B)
  FloatArray acc;                ///< [outputs][2 * stride] output spectra
  FloatArray result;             ///< [outputs][2B] inverse transforms
  Plan r2c, c2r;
  std::uint64_t count = 0;  ///< periods processed since the last reset
  const float* in = nullptr;
  float* out = nullptr;

  Impl(const Config& c, unsigned threads) : L(make_layout(c)), wet(c.wet), dry(c.dry) {
    stride = (L.bins + kCpuBinBlock - 1) / kCpuBinBlock * kCpuBinBlock;
    const std::size_t N = L.fft_size;
    window = allocate(N * L.inputs);
    ring = allocate(L.ring_spectra() * 2 * stride);
    spectra = allocate(L.ir_spectra() * 2 * stride);
    acc = allocate(L.outputs * 2 * stride);
    result = allocate(N * L.outputs);
    make_plans();
    compute_ir_spectra(c);
    if (threads != 1) pool = std::make_unique<RtPool>(RtPoolOptions{.threads = threads});
  }

  float* ring_spectrum(std::uint32_t input, std::uint32_t slot) const {
    return ring.get() + (L.ring_offset[input] + slot) * 2 * stride;
  }
  float* ir_spectrum(std::uint32_t ir, std::uint32_t part) const {
    return spectra.get() + (L.ir_offset[ir] + part) * 2 * stride;
  }

  // Every transform runs on arrays allocated like these (fftwf_malloc, offsets that are
  // multiples of 8 floats = 32 bytes), which is what FFTW's new-array execute functions require.
  void make_plans() {
    std::lock_guard lock(planner_mutex());
    fftwf_iodim dim{static_cast<int>(L.fft_size), 1, 1};
    float* re = acc.get();
    float* im = acc.get() + stride;
    r2c = Plan(
        fftwf_plan_guru_split_dft_r2c(1, &dim, 0, nullptr, window.get(), re, im, FFTW_MEASURE));
    c2r = Plan(
        fftwf_plan_guru_split_dft_c2r(1, &dim, 0, nullptr, re, im, result.get(), FFTW_MEASURE));
    // FFTW_MEASURE scribbles on the arrays it plans with.
    std::memset(window.get(), 0, L.fft_size * L.inputs * sizeof(float));
  }

  void compute_ir_spectra(const Config& c) {
    const std::size_t B = L.partition;
    const float scale = 1.0f / static_cast<float>(L.fft_size);  // the inverse FFT's 1 / N
    FloatArray frame = allocate(L.fft_size);
    for (std::uint32_t ir = 0; ir < c.irs.size(); ++ir) {
      const auto& taps = c.irs[ir];
      for (std::uint32_t p = 0; p < L.ir_partitions[ir]; ++p) {
        const std::size_t n = std::min(B, taps.size() - p * B);
        for (std::size_t k = 0; k < n; ++k) frame[k] = taps[p * B + k] * scale;
        std::fill(frame.get() + n, frame.get() + L.fft_size, 0.0f);
        float* s = ir_spectrum(ir, p);
        fftwf_execute_split_dft_r2c(r2c.p, frame.get(), s, s + stride);
      }
    }
  }

  void process_inputs(std::size_t begin, std::size_t end) {
    const std::size_t B = L.partition;
    for (std::size_t i = begin; i < end; ++i) {
      float* w = window.get() + i * L.fft_size;
      std::memcpy(w, w + B, B * sizeof(float));
      std::memcpy(w + B, in + i * B, B * sizeof(float));
      float* x = ring_spectrum(static_cast<std::uint32_t>(i), count % L.ring_slots[i]);
      fftwf_execute_split_dft_r2c(r2c.p, w, x, x + stride);
    }
  }

  void process_outputs(std::size_t begin, std::size_t end) {
    const std::size_t B = L.partition;
    for (std::size_t o = begin; o < end; ++o) {
      float* yr = acc.get() + o * 2 * stride;
      float* yi = yr + stride;
      std::memset(yr, 0, 2 * stride * sizeof(float));
      for (std::uint32_t t = L.output_begin[o]; t < L.output_begin[o + 1]; ++t) {
        const Term term = L.terms[t];
        const std::uint32_t slots = L.ring_slots[term.input];
        const auto newest = static_cast<std::uint32_t>(count % slots);
        for (std::uint32_t age = 0; age < L.ir_partitions[term.ir]; ++age) {
          const float* x = ring_spectrum(term.input, ring_slot(newest, age, slots));
          const float* h = ir_spectrum(term.ir, age);
          mac_spectrum(yr, yi, x, x + stride, h, h + stride, stride);
        }
      }
      float* y = result.get() + o * L.fft_size;
      fftwf_execute_split_dft_c2r(c2r.p, yr, yi, y);
      float* dst = out + o * B;
      if (dry != 0) {
        const float* x = window.get() + o * L.fft_size + B;
        for (std::size_t n = 0; n < B; ++n) dst[n] = wet * y[B + n] + dry * x[n];
      } else {
        for (std::size_t n = 0; n < B; ++n) dst[n] = wet * y[B + n];
      }
    }
  }

  void process(std::span<const float> input, std::span<float> output) {
    const std::size_t B = L.partition;
    if (input.size() != B * L.inputs || output.size() != B * L.outputs)
      throw Error("convolution process: expected " + std::to_string(B * L.inputs) + " input and " +
                  std::to_string(B * L.outputs) + " output samples, got " +
                  std::to_string(input.size()) + " and " + std::to_string(output.size()));
    in = input.data();
    out = output.data();
    if (pool) {
      pool->run(L.inputs, [this](std::size_t b, std::size_t e) { process_inputs(b, e); });
      pool->run(L.outputs, [this](std::size_t b, std::size_t e) { process_outputs(b, e); });
    } else {
      process_inputs(0, L.inputs);
      process_outputs(0, L.outputs);
    }
    ++count;
  }

  void reset() {
    std::memset(window.get(), 0, L.fft_size * L.inputs * sizeof(float));
    std::memset(ring.get(), 0, L.ring_spectra() * 2 * stride * sizeof(float));
    count = 0;
  }
};

CpuConvolver::CpuConvolver(const Config& config, unsigned threads)
    : impl_(std::make_unique<Impl>(config, threads)) {}
CpuConvolver::~CpuConvolver() = default;
CpuConvolver::CpuConvolver(CpuConvolver&&) noexcept = default;
CpuConvolver& CpuConvolver::operator=(CpuConvolver&&) noexcept = default;

void CpuConvolver::process(std::span<const float> in, std::span<float> out) {
  const ScopedNoDenormals flush;  // a decaying tail must not slow the period
  impl_->process(in, out);
}
void CpuConvolver::reset() {
  impl_->reset();
}
std::uint32_t CpuConvolver::partition() const {
  return impl_->L.partition;
}
std::uint32_t CpuConvolver::inputs() const {
  return impl_->L.inputs;
}
std::uint32_t CpuConvolver::outputs() const {
  return impl_->L.outputs;
}

}  // namespace sigpu::convolution
