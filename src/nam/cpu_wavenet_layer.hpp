// One WaveNet residual layer over a period on the CPU, compiled once per instruction set:
// cpu_wavenet_baseline.cpp (SSE2, every x86-64 / any other CPU) and cpu_wavenet_avx2.cpp
// (AVX2 + FMA, chosen at run time when the CPU has them). Each build lives in its own
// namespace (SIGPU_NAM_ISA) so the two never mix at link time.
#pragma once

#include <cstring>

#include "nam/activation.hpp"

namespace sigpu::nam {

/// Everything one layer pass reads and writes. Histories are rings of frames, channels
/// contiguous per frame, indexed by (sample position & mask).
struct LayerPass {
  const float* conv;      // [k][channels][zc]
  const float* bias;      // [zc]
  const float* mixin;     // [zc] (the condition is the mono input)
  const float* out;       // [channels][channels], input-major
  const float* out_bias;  // [channels]
  int channels, zc, kernel, dilation;
  bool gated;
  Activation activation;
  const float* ring;  // this layer's input history
  long ring_mask;
  float* next;  // the next layer's input history, or nullptr for the array's last layer
  long next_mask;
  float* array_out;   // [frame][channels]: the last layer's output
  float* z;           // scratch, [frame][zc]
  float* head;        // [frame][channels], += this layer's activations
  const float* cond;  // [frame]
  long long pos;      // sample position of the period's first frame
  int frames;
};

using LayerFn = void (*)(const LayerPass&);

/// The fastest layer pass this CPU runs for these sizes. SIGPU_NAM_CPU=baseline in the
/// environment forces the baseline build (tests compare both with the float64 oracle).
LayerFn layer_function(int channels, int zc);

namespace baseline {
LayerFn pick(int channels, int zc);
}
namespace avx2 {
LayerFn pick(int channels, int zc);  // nullptr where the build has no AVX2 version
}

#ifdef SIGPU_NAM_ISA
namespace SIGPU_NAM_ISA {

// y[0..out) += sum_i w[i][0..out) * x[i] with input-major weights (runtime sizes).
template <int, int>
SIGPU_FORCEINLINE void accumulate(float* __restrict y, const float* __restrict w,
                                  const float* __restrict x, int in, int out) {
  for (int i = 0; i < in; ++i) {
    const float xi = x[i];
    const float* __restrict wi = w + static_cast<long>(i) * out;
    for (int o = 0; o < out; ++o) y[o] += wi[o] * xi;
  }
}

// x[i] = f(x[i]); the switch sits outside the loops so that they vectorise.
SIGPU_FORCEINLINE void activate_block(Activation a, float* x, int n) {
  switch (a) {
    case Activation::tanh:
      for (int i = 0; i < n; ++i) x[i] = fast_tanh(x[i]);
      return;
    case Activation::sigmoid:
      for (int i = 0; i < n; ++i) x[i] = sigmoid(x[i]);
      return;
    default:
      for (int i = 0; i < n; ++i) x[i] = activate(a, x[i]);
  }
}

// Compile-time sizes: kN frames at once, so that each weight vector is loaded once for all
// of them and kN independent sums hide the multiply-add latency. Every frame still sees the
// same operations in the same order as alone (kN = 1), so output stays independent of the
// period size.
template <int kC, int kZ, int kN>
SIGPU_FORCEINLINE void conv_frames(const LayerPass& p, int t) {
  constexpr int kW = SIGPU_NAM_VEC, kVz = kZ / kW;
  using vec = float __attribute__((vector_size(kW * sizeof(float))));
  vec acc[kN][kVz];
  for (int j = 0; j < kVz; ++j) {
    vec b, m;
    std::memcpy(&b, p.bias + kW * j, sizeof b);
    std::memcpy(&m, p.mixin + kW * j, sizeof m);
    for (int f = 0; f < kN; ++f) acc[f][j] = b + m * p.cond[t + f];
  }
  for (int k = 0; k < p.kernel; ++k) {
    const long long back = static_cast<long long>(p.dilation) * (p.kernel - 1 - k);
    const float* rows[kN];
    for (int f = 0; f < kN; ++f) rows[f] = p.ring + ((p.pos + t + f - back) & p.ring_mask) * kC;
    const float* w = p.conv + static_cast<long>(k) * kC * kZ;
    for (int i = 0; i < kC; ++i) {
      vec wv[kVz];  // one load per vector: a wider copy would stall on store forwarding
      for (int j = 0; j < kVz; ++j) std::memcpy(&wv[j], w + i * kZ + kW * j, sizeof(vec));
      for (int f = 0; f < kN; ++f) {
        const float xi = rows[f][i];
        for (int j = 0; j < kVz; ++j) acc[f][j] += wv[j] * xi;
      }
    }
  }
  for (int f = 0; f < kN; ++f)
    std::memcpy(p.z + static_cast<long>(t + f) * kZ, acc[f], sizeof acc[f]);
}

template <int kC, int kN>
SIGPU_FORCEINLINE void residual_frames(const LayerPass& p, int t, int zc) {
  constexpr int kW = SIGPU_NAM_VEC, kV = kC / kW;
  using vec = float __attribute__((vector_size(kW * sizeof(float))));
  vec acc[kN][kV];
  float* y[kN];
  const float* z[kN];
  for (int f = 0; f < kN; ++f) {
    const long long now = p.pos + t + f;
    const float* x = p.ring + (now & p.ring_mask) * kC;
    y[f] = p.next ? p.next + (now & p.next_mask) * kC : p.array_out + static_cast<long>(t + f) * kC;
    z[f] = p.z + static_cast<long>(t + f) * zc;
    for (int j = 0; j < kV; ++j) {
      vec xv, b;
      std::memcpy(&xv, x + kW * j, sizeof xv);
      std::memcpy(&b, p.out_bias + kW * j, sizeof b);
      acc[f][j] = xv + b;
    }
  }
  for (int i = 0; i < kC; ++i) {
    vec wv[kV];
    for (int j = 0; j < kV; ++j) std::memcpy(&wv[j], p.out + i * kC + kW * j, sizeof(vec));
    for (int f = 0; f < kN; ++f) {
      const float zi = z[f][i];
      for (int j = 0; j < kV; ++j) acc[f][j] += wv[j] * zi;
    }
  }
  for (int f = 0; f < kN; ++f) std::memcpy(y[f], acc[f], sizeof acc[f]);
}

// The dilated conv and mix-in for every frame, the activation over the whole block, then
// the head sums and the 1x1 + residual into the next layer's history.
template <int kC, int kZ>
void run_layer(const LayerPass& p) {
  const int ch = kC > 0 ? kC : p.channels, zc = kZ > 0 ? kZ : p.zc, K = p.kernel;
  if constexpr (kC > 0) {
    // Frames per block: as many as keep the sums in 8 vector registers.
    constexpr int kBlock = 8 / (kZ / SIGPU_NAM_VEC) > 0 ? 8 / (kZ / SIGPU_NAM_VEC) : 1;
    int t = 0;
    for (; t + kBlock <= p.frames; t += kBlock) conv_frames<kC, kZ, kBlock>(p, t);
    for (; t < p.frames; ++t) conv_frames<kC, kZ, 1>(p, t);
  } else {
    for (int t = 0; t < p.frames; ++t) {
      const long long now = p.pos + t;
      float* zt = p.z + static_cast<long>(t) * zc;
      const float ct = p.cond[t];
      for (int o = 0; o < zc; ++o) zt[o] = p.bias[o] + p.mixin[o] * ct;
      for (int k = 0; k < K; ++k) {
        const long long tap = now - static_cast<long long>(p.dilation) * (K - 1 - k);
        accumulate<0, 0>(zt, p.conv + static_cast<long>(k) * ch * zc,
                         p.ring + (tap & p.ring_mask) * ch, ch, zc);
      }
    }
  }
  if (p.gated) {
    for (int t = 0; t < p.frames; ++t) {
      float* zt = p.z + static_cast<long>(t) * zc;
      activate_block(p.activation, zt, ch);
      for (int o = 0; o < ch; ++o) zt[o] *= sigmoid(zt[o + ch]);
    }
  } else {
    activate_block(p.activation, p.z, p.frames * zc);
  }
  for (int t = 0; t < p.frames; ++t) {
    const float* zt = p.z + static_cast<long>(t) * zc;
    float* head = p.head + static_cast<long>(t) * ch;
    for (int o = 0; o < ch; ++o) head[o] += zt[o];
  }
  if constexpr (kC > 0) {
    constexpr int kBlock = 8 / (kC / SIGPU_NAM_VEC) > 0 ? 8 / (kC / SIGPU_NAM_VEC) : 1;
    int t = 0;
    for (; t + kBlock <= p.frames; t += kBlock) residual_frames<kC, kBlock>(p, t, zc);
    for (; t < p.frames; ++t) residual_frames<kC, 1>(p, t, zc);
  } else {
    for (int t = 0; t < p.frames; ++t) {
      const long long now = p.pos + t;
      const float* zt = p.z + static_cast<long>(t) * zc;
      const float* x = p.ring + (now & p.ring_mask) * ch;
      float* y =
          p.next ? p.next + (now & p.next_mask) * ch : p.array_out + static_cast<long>(t) * ch;
      for (int o = 0; o < ch; ++o) y[o] = x[o] + p.out_bias[o];
      accumulate<0, 0>(y, p.out, zt, ch, ch);
    }
  }
}

// The standard WaveNets' sizes get compile-time loops; anything else the generic ones.
inline LayerFn pick_layer(int channels, int zc) {
  if (channels == 16 && zc == 16) return run_layer<16, 16>;
  if (channels == 8 && zc == 8) return run_layer<8, 8>;
  if (channels == 16 && zc == 32) return run_layer<16, 32>;
  if (channels == 8 && zc == 16) return run_layer<8, 16>;
  return run_layer<0, 0>;
}

}  // namespace SIGPU_NAM_ISA
#endif

}  // namespace sigpu::nam
