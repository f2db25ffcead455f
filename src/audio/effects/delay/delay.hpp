// Feedback delay line with a wet/dry mix. When the delay time changes, the read position
// cross-fades from the old tap to the new one over the period instead of jumping (a click).
#pragma once

#include <cstdint>

#include "audio/effects/batched.hpp"
#include "core/hd.hpp"

namespace sigpu::audio::dsp {

struct DelayParams {
  std::uint32_t from = 1, to = 1;  ///< delay in samples at the start / end of the period
  std::uint32_t length = 2;        ///< ring length: the longest delay + 1
  float feedback = 0, mix = 0;     ///< mix: 0 dry only, 1 wet only
};
struct DelayJob {
  std::uint32_t in, out, ring, state, params;  ///< ring: offset in the ring array
};
struct DelayState {
  std::uint32_t pos = 0;  ///< next write position in the ring
};

SIGPU_HD inline void delay_job(const DelayJob& j, const DelayParams* params, DelayState* states,
                               float* rings, float* arena, int n) {
  const DelayParams p = params[j.params];
  float* ring = rings + j.ring;
  std::uint32_t pos = states[j.state].pos;
  const float* in = arena + j.in;
  float* out = arena + j.out;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (int i = 0; i < n; ++i) {
    float wet = ring[(pos + p.length - p.from) % p.length];
    if (p.from != p.to) {
      const float later = ring[(pos + p.length - p.to) % p.length];
      wet += (later - wet) * (static_cast<float>(i + 1) * inv_n);
    }
    const float x = in[i];
    ring[pos] = x + p.feedback * wet;
    out[i] = x + p.mix * (wet - x);
    pos = pos + 1 == p.length ? 0 : pos + 1;
  }
  states[j.state].pos = pos;
}

}  // namespace sigpu::audio::dsp

namespace sigpu::audio::effects {

/// The delay lines are the kind's scratch floats (Data::scratch), one ring per channel.
struct DelayKind {
  using Job = dsp::DelayJob;
  using Aux = batched::None;
  using Param = dsp::DelayParams;
  using State = dsp::DelayState;
  using Data = batched::Data<DelayKind>;
  using Cpu = batched::Cpu<DelayKind>;
#ifdef __CUDACC__
  using Cuda = batched::Cuda<DelayKind>;
#endif
  static constexpr bool heavy = false;
  SIGPU_HD static void run(const batched::View<DelayKind>& v, std::uint32_t j) {
    dsp::delay_job(v.jobs[j], v.params, v.state, v.scratch, v.arena, v.n);
  }
  static void settle(Param& d) {
    d.from = d.to;
  }
};

}  // namespace sigpu::audio::effects
