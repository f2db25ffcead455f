// Gain, pan, mixer and router are one operation: each output channel is a sum of input channels
// times gains (a sparse matrix, one row per output). A gain that changes is ramped linearly over
// the period so that it does not click.
#pragma once

#include <cstdint>

#include "audio/effects/batched.hpp"
#include "core/hd.hpp"

namespace sigpu::audio::dsp {

struct GainRamp {
  float from = 0, to = 0;  ///< linear gain at the start and at the end of this period
};
struct MixTerm {
  std::uint32_t in;    ///< arena offset of the input channel
  std::uint32_t gain;  ///< index into the GainRamp array
};
/// One output channel: out = sum over terms[begin, end) of in * gain.
struct MixJob {
  std::uint32_t out, term_begin, term_end;
};

/// The gain at sample i of n while it moves from `from` to `to` (reached at the last sample).
SIGPU_HD SIGPU_FORCEINLINE float ramp(float from, float to, int i, float inv_n) {
  return from == to ? to : from + (to - from) * (static_cast<float>(i + 1) * inv_n);
}

SIGPU_HD inline void mix_job(const MixJob& j, const MixTerm* terms, const GainRamp* gains,
                             float* arena, int n) {
  float* out = arena + j.out;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int i = 0; i < n; ++i) out[i] = 0.0f;
  for (std::uint32_t t = j.term_begin; t < j.term_end; ++t) {
    const float* in = arena + terms[t].in;
    const GainRamp g = gains[terms[t].gain];
    for (int i = 0; i < n; ++i) out[i] += in[i] * ramp(g.from, g.to, i, inv_n);
  }
}

}  // namespace sigpu::audio::dsp

namespace sigpu::audio::effects {

/// The kind gain, pan, mixer and router share: one job per output channel, the terms as aux.
struct MixKind {
  using Job = dsp::MixJob;
  using Aux = dsp::MixTerm;
  using Param = dsp::GainRamp;
  using State = batched::None;
  using Data = batched::Data<MixKind>;
  using Cpu = batched::Cpu<MixKind>;
#ifdef __CUDACC__
  using Cuda = batched::Cuda<MixKind>;
#endif
  static constexpr bool heavy = false;
  SIGPU_HD static void run(const batched::View<MixKind>& v, std::uint32_t j) {
    dsp::mix_job(v.jobs[j], v.aux, v.params, v.arena, v.n);
  }
  static void settle(Param& g) {
    g.from = g.to;
  }
};

}  // namespace sigpu::audio::effects
