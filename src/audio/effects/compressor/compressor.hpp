// Feed-forward compressor after Giannoulis, Massberg and Reiss, "Digital Dynamic Range
// Compressor Design - A Tutorial and Analysis" (JAES 60(6), 2012): a soft-knee gain computer in
// the log domain, then the smooth branching peak detector on the gain reduction, then makeup.
// The level comes from the side-chain channel (the input itself when none is routed).
#pragma once

#include <cmath>
#include <cstdint>

#include "audio/effects/batched.hpp"
#include "audio/effects/mix/mix.hpp"
#include "core/hd.hpp"

namespace sigpu::audio::dsp {

struct CompressorParams {
  float threshold_db = 0, ratio = 1, knee_db = 0;
  float attack = 0, release = 0;  ///< per-sample smoothing coefficients
  GainRamp makeup;                ///< linear makeup gain, ramped
};
struct CompressorState {
  float reduction_db = 0;  ///< smoothed gain reduction, >= 0
};
struct CompressorJob {
  std::uint32_t in, side, out, state, params;
};

inline constexpr float kDbPerNeper = 8.685889638f;   // 20 / ln 10
inline constexpr float kNeperPerDb = 0.1151292546f;  // ln 10 / 20
inline constexpr float kSilenceDb = -200.0f;

/// The static curve: output level in dB for input level x (dB).
SIGPU_HD SIGPU_FORCEINLINE float compressor_curve(float x, float threshold, float ratio,
                                                  float knee) {
  const float over = x - threshold;
  if (2.0f * over < -knee) return x;
  if (knee > 0.0f && 2.0f * (over < 0.0f ? -over : over) <= knee) {
    const float k = over + 0.5f * knee;
    return x + (1.0f / ratio - 1.0f) * k * k / (2.0f * knee);
  }
  return threshold + over / ratio;
}

SIGPU_HD inline void compressor_job(const CompressorJob& j, const CompressorParams* params,
                                    CompressorState* states, float* arena, int n) {
  const CompressorParams p = params[j.params];
  float y = states[j.state].reduction_db;
  const float* in = arena + j.in;
  const float* side = arena + j.side;
  float* out = arena + j.out;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int i = 0; i < n; ++i) {
    const float s = side[i] < 0.0f ? -side[i] : side[i];
    const float level = s > 1e-10f ? logf(s) * kDbPerNeper : kSilenceDb;
    const float reduction = level - compressor_curve(level, p.threshold_db, p.ratio, p.knee_db);
    const float a = reduction > y ? p.attack : p.release;
    y = a * y + (1.0f - a) * reduction;
    const float gain = expf(-y * kNeperPerDb) * ramp(p.makeup.from, p.makeup.to, i, inv_n);
    out[i] = in[i] * gain;
  }
  states[j.state].reduction_db = y;
}

}  // namespace sigpu::audio::dsp

namespace sigpu::audio::effects {

struct CompressorKind {
  using Job = dsp::CompressorJob;
  using Aux = batched::None;
  using Param = dsp::CompressorParams;
  using State = dsp::CompressorState;
  using Data = batched::Data<CompressorKind>;
  using Cpu = batched::Cpu<CompressorKind>;
#ifdef __CUDACC__
  using Cuda = batched::Cuda<CompressorKind>;
#endif
  static constexpr bool heavy = false;
  SIGPU_HD static void run(const batched::View<CompressorKind>& v, std::uint32_t j) {
    dsp::compressor_job(v.jobs[j], v.params, v.state, v.arena, v.n);
  }
  static void settle(Param& c) {
    c.makeup.from = c.makeup.to;
  }
};

}  // namespace sigpu::audio::effects
