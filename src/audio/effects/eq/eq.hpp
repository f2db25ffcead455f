// eq's processing: a cascade of biquads (RBJ cookbook coefficients, computed on the host in
// biquad_design.cpp) run in
// transposed direct form II. Coefficients and state are float64: a float32 biquad at low
// frequencies drifts far above -100 dBFS from the exact filter (its poles sit next to z = 1,
// where float32 coefficients cannot place them), and FP64 is cheap on the GPUs we target.
// A coefficient change is interpolated linearly over one period.
#pragma once

#include <cstdint>

#include "audio/effects/batched.hpp"
#include "core/hd.hpp"

namespace sigpu::audio::dsp {

/// Normalised so that a0 = 1: y = b0 x + b1 x[-1] + b2 x[-2] - a1 y[-1] - a2 y[-2].
struct BiquadCoefs {
  double b0 = 1, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
};
struct EqBand {
  BiquadCoefs from, to;  ///< at the start / end of this period (equal when not ramping)
  bool ramping = false;
};
/// One channel through bands[band_begin, band_begin + bands); state holds 2 doubles per band.
struct EqJob {
  std::uint32_t in, out, state, band_begin, bands;
};

SIGPU_HD SIGPU_FORCEINLINE double lerp(double a, double b, double t) {
  return a + (b - a) * t;
}

/// Samples go through the cascade eight at a time: the block stays in registers while each
/// band's coefficients and state are loaded once per block, not once per sample. Every sample
/// sees the same operations in the same order as a sample-by-sample loop.
inline constexpr int kEqBlock = 8;

SIGPU_HD inline void eq_job(const EqJob& j, const EqBand* bands, double* state, float* arena,
                            int n) {
  const float* in = arena + j.in;
  float* out = arena + j.out;
  double* s = state + j.state;
  const EqBand* band = bands + j.band_begin;
  const double inv_n = 1.0 / static_cast<double>(n);
  for (int i0 = 0; i0 < n; i0 += kEqBlock) {
    const int m = n - i0 < kEqBlock ? n - i0 : kEqBlock;
    double x[kEqBlock];
    for (int k = 0; k < kEqBlock; ++k) x[k] = k < m ? static_cast<double>(in[i0 + k]) : 0.0;
    for (std::uint32_t b = 0; b < j.bands; ++b) {
      const BiquadCoefs to = band[b].to, from = band[b].from;
      const bool ramping = band[b].ramping;
      double z0 = s[2 * b], z1 = s[2 * b + 1];
      for (int k = 0; k < kEqBlock; ++k) {
        if (k < m) {
          BiquadCoefs c = to;
          if (ramping) {
            const double t = static_cast<double>(i0 + k + 1) * inv_n;
            c = {lerp(from.b0, to.b0, t), lerp(from.b1, to.b1, t), lerp(from.b2, to.b2, t),
                 lerp(from.a1, to.a1, t), lerp(from.a2, to.a2, t)};
          }
          const double y = c.b0 * x[k] + z0;
          z0 = c.b1 * x[k] - c.a1 * y + z1;
          z1 = c.b2 * x[k] - c.a2 * y;
          x[k] = y;
        }
      }
      s[2 * b] = z0;
      s[2 * b + 1] = z1;
    }
    for (int k = 0; k < kEqBlock; ++k) {
      if (k < m) out[i0 + k] = static_cast<float>(x[k]);
    }
  }
}

}  // namespace sigpu::audio::dsp

namespace sigpu::audio::effects {

struct EqKind {
  using Job = dsp::EqJob;
  using Aux = batched::None;
  using Param = dsp::EqBand;
  using State = double;  ///< 2 per band and channel
  using Data = batched::Data<EqKind>;
  using Cpu = batched::Cpu<EqKind>;
#ifdef __CUDACC__
  using Cuda = batched::Cuda<EqKind>;
#endif
  static constexpr bool heavy = false;
  SIGPU_HD static void run(const batched::View<EqKind>& v, std::uint32_t j) {
    dsp::eq_job(v.jobs[j], v.params, v.state, v.arena, v.n);
  }
  static void settle(Param& b) {
    b.from = b.to;
    b.ramping = false;
  }
};

}  // namespace sigpu::audio::effects
