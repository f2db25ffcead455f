// Noise gate: open while |x| is above the threshold and for `hold` samples after the last
// sample that was; the gain moves exponentially towards 1 when open (attack time constant)
// and towards the floor when closed (release time constant), so it never jumps.
#pragma once

#include <cstdint>

#include "audio/effects/batched.hpp"
#include "core/hd.hpp"

namespace sigpu::audio::dsp {

struct GateParams {
  float threshold = 0;     ///< linear
  float attack = 0;        ///< per-sample smoothing coefficient exp(-1 / (t fs))
  float release = 0;       ///< same, for closing
  std::uint32_t hold = 0;  ///< samples
  float floor = 0;         ///< linear gain when closed
};
struct GateState {
  float gain = 0;
  std::uint32_t hold_left = 0;
};
struct GateJob {
  std::uint32_t in, out, state, params;
};

SIGPU_HD inline void gate_job(const GateJob& j, const GateParams* params, GateState* states,
                              float* arena, int n) {
  const GateParams p = params[j.params];
  GateState st = states[j.state];
  const float* in = arena + j.in;
  float* out = arena + j.out;
  for (int i = 0; i < n; ++i) {
    const float x = in[i];
    const float level = x < 0.0f ? -x : x;
    bool open = level > p.threshold;
    if (open) {
      st.hold_left = p.hold;
    } else if (st.hold_left > 0) {
      --st.hold_left;
      open = true;
    }
    const float target = open ? 1.0f : p.floor;
    const float a = target > st.gain ? p.attack : p.release;
    st.gain = a * st.gain + (1.0f - a) * target;
    out[i] = x * st.gain;
  }
  states[j.state] = st;
}

}  // namespace sigpu::audio::dsp

namespace sigpu::audio::effects {

struct GateKind {
  using Job = dsp::GateJob;
  using Aux = batched::None;
  using Param = dsp::GateParams;
  using State = dsp::GateState;
  using Data = batched::Data<GateKind>;
  using Cpu = batched::Cpu<GateKind>;
#ifdef __CUDACC__
  using Cuda = batched::Cuda<GateKind>;
#endif
  static constexpr bool heavy = false;
  SIGPU_HD static void run(const batched::View<GateKind>& v, std::uint32_t j) {
    dsp::gate_job(v.jobs[j], v.params, v.state, v.arena, v.n);
  }
  static void settle(Param&) {}
};

}  // namespace sigpu::audio::effects
