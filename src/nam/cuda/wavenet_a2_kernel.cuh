// One launch advances every instance of any WaveNet (A1 or A2, each instance its own network,
// slimmable models with all their sizes; LSTMs among them) by one period: a block per instance, as
// the A1 kernel (wavenet_kernel.cuh), with the layer's steps as passes over [channel][frame] in
// shared memory between __syncthreads. A grouped convolution's output row reads only its group's
// inputs; the bottleneck is the width of the conv output; FiLM scales (and shifts) a value by a
// grouped 1x1 of the condition, computed where the value is. A condition_dsp runs before its net,
// into the condition buffer. A slimmable model runs every size each period and crossfades at a size
// change, as Processor does. The body is a __device__ function of its shared memory so that
// the tests also run it on the CPU (tests/support/cuda_emulation.hpp).
#pragma once

#include <sigpu/nam.hpp>

#include "nam/activation.hpp"
#include "nam/cuda/net_desc.hpp"

namespace sigpu::nam::cuda {

struct A2Args {
  const A2NetDesc* nets;
  const A2ArrayDesc* arrays;
  const A2LayerDesc* layers;
  const A2InstanceDesc* instances;
  float* state;
  long long* positions;
  SizeFade* fades;
  const volatile int* wanted;  // per instance: the size index asked for (host-mapped memory)
  const float* const* inputs;
  float* const* outputs;
  int widest;         // rows of every activation buffer
  int max_sizes;      // of any instance
  int staged_floats;  // shared memory for weights: the largest net's (0: read from global)
};

/// Floats of shared memory a period of `frames` needs (the weights excluded).
SIGPU_HD inline long a2_work_floats(int widest, int max_sizes, int frames) {
  return 4 + static_cast<long>(frames) * (1 + 8L * widest + max_sizes);
}

/// A net's weights: in shared memory, or in global memory read through the read-only cache.
template <bool kGlobal>
struct A2Weights {
  const float* p;
  __device__ float operator[](int i) const {
#ifdef __CUDA_ARCH__
    if constexpr (kGlobal)
      return __ldg(p + i);
    else
      return p[i];
#else
    return p[i];
#endif
  }
};

/// Row `row` of a grouped 1x1 of x ([in][F]) at frame t, bias included.
template <typename W>
__device__ inline float a2_conv1x1_row(W w, const ConvDesc& c, const float* x, int F, int row,
                                       int t) {
  const int ig = c.in / c.groups, g = row / (c.out / c.groups);
  const int wr = c.w + row * ig;
  const float* xr = x + g * ig * F + t;
  float acc = 0.0f;
  for (int i = 0; i < ig; ++i) acc += w[wr + i] * xr[i * F];
  if (c.b >= 0) acc += w[c.b + row];
  return acc;
}

/// v FiLMed at row `row`, frame t, by the condition cnd ([in][F]).
template <typename W>
__device__ inline float a2_film(W w, const FilmDesc& f, const float* cnd, int F, int row, int t,
                                float v) {
  const float scale = a2_conv1x1_row(w, f.conv, cnd, F, row, t);
  return f.shift ? v * scale + a2_conv1x1_row(w, f.conv, cnd, F, f.dim + row, t) : v * scale;
}

/// Row `row` of a grouped dilated convolution at stream position pos + t, reading its input
/// history ring ([in][mask + 1]), the taps oldest first, then the bias.
template <typename W>
__device__ inline float a2_conv_row(W w, const ConvDesc& c, const float* ring, int mask,
                                    long long pos, int row, int t) {
  const int ig = c.in / c.groups, g = row / (c.out / c.groups), K = c.kernel, len = mask + 1;
  const int wr = c.w + row * ig * K;  // [ig][K]
  const float* r = ring + g * ig * len;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) {
    const int at =
        static_cast<int>((pos + t - static_cast<long long>(c.dilation) * (K - 1 - k)) & mask);
    for (int i = 0; i < ig; ++i) acc += w[wr + i * K + k] * r[i * len + at];
  }
  if (c.b >= 0) acc += w[c.b + row];
  return acc;
}

template <typename W>
__device__ inline float a2_activate(W w, const ActDesc& a, float x, int c) {
  const float slope = a.num_slopes ? w[a.slopes + c % a.num_slopes] : a.slope;
  return activate(static_cast<Activation>(a.kind), x, slope, a.lo, a.hi, a.lo_slope, a.hi_slope);
}

/// The block's activation buffers, each [widest][F] (sig: [F]).
struct A2Buffers {
  float *sig, *cond, *xa, *xb, *z, *h, *tc, *acc, *y;
};

/// One layer at pos .. pos + F: x in and out (the residual), its head output added to acc.
template <typename W>
__device__ inline void a2_layer(const A2LayerDesc& L, W w, float* st, long long pos, int F,
                                const float* cnd, float* x, const A2Buffers& B) {
  const int C = L.conv.in, Z = L.conv.out, Bn = L.bottleneck, CS = L.mixin.in;
  const FilmDesc* film = L.film;
  const auto on = [&](int s) { return film[s].conv.w >= 0; };
  float* ring = st + L.ring;
  const int len = L.ring_mask + 1;
  // The conv's input history (FiLMed), and the FiLMed condition for the mix-in.
  for (int i = threadIdx.x; i < (C + CS) * F; i += blockDim.x) {
    const int r = i / F, t = i - r * F;
    if (r < C) {
      float v = x[i];
      if (on(conv_pre_film)) v = a2_film(w, film[conv_pre_film], cnd, F, r, t, v);
      ring[r * len + static_cast<int>((pos + t) & L.ring_mask)] = v;
    } else if (on(input_mixin_pre_film)) {
      const int j = r - C;
      B.tc[j * F + t] = a2_film(w, film[input_mixin_pre_film], cnd, F, j, t, cnd[j * F + t]);
    }
  }
  __syncthreads();
  const float* mix_src = on(input_mixin_pre_film) ? B.tc : cnd;
  for (int i = threadIdx.x; i < Z * F; i += blockDim.x) {
    const int o = i / F, t = i - o * F;
    float v = a2_conv_row(w, L.conv, ring, L.ring_mask, pos, o, t);
    if (on(conv_post_film)) v = a2_film(w, film[conv_post_film], cnd, F, o, t, v);
    float u = a2_conv1x1_row(w, L.mixin, mix_src, F, o, t);
    if (on(input_mixin_post_film)) u = a2_film(w, film[input_mixin_post_film], cnd, F, o, t, u);
    v += u;
    if (on(activation_pre_film)) v = a2_film(w, film[activation_pre_film], cnd, F, o, t, v);
    B.z[i] = v;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < Bn * F; i += blockDim.x) {
    const int c = i / F;
    const float a = B.z[i];
    float v;
    if (L.gating == static_cast<int>(Gating::none)) {
      v = a2_activate(w, L.act, a, c);
    } else {
      const float s = a2_activate(w, L.secondary, B.z[i + Bn * F], c);
      v = L.gating == static_cast<int>(Gating::gated)
              ? a2_activate(w, L.act, a, c) * s
              : s * a2_activate(w, L.act, a, c) + (1.0f - s) * a;
    }
    if (on(activation_post_film))
      v = a2_film(w, film[activation_post_film], cnd, F, c, i - c * F, v);
    B.h[i] = v;
  }
  __syncthreads();
  const bool head1x1 = L.head1x1.w >= 0, layer1x1 = L.layer1x1.w >= 0;
  const int H = head1x1 ? L.head1x1.out : Bn;
  for (int i = threadIdx.x; i < (H + (layer1x1 ? C : 0)) * F; i += blockDim.x) {
    const int r = i / F, t = i - r * F;
    if (r < H) {
      float v = B.h[i];
      if (head1x1) {
        v = a2_conv1x1_row(w, L.head1x1, B.h, F, r, t);
        if (on(head1x1_post_film)) v = a2_film(w, film[head1x1_post_film], cnd, F, r, t, v);
      }
      B.acc[i] += v;
    } else {
      const int c = r - H;
      float v = a2_conv1x1_row(w, L.layer1x1, B.h, F, c, t);
      // NeuralAmpModelerCore applies layer1x1_post_film in blended layers only.
      if (L.gating == static_cast<int>(Gating::blended) && on(layer1x1_post_film))
        v = a2_film(w, film[layer1x1_post_film], cnd, F, c, t, v);
      x[c * F + t] += v;
    }
  }
  __syncthreads();
}

/// Copies n floats (n % 4 == 0) to shared memory.
__device__ inline void a2_stage(float* dst, const float* src, int n) {
#ifdef __CUDA_ARCH__
  const float4* s = reinterpret_cast<const float4*>(src);
  float4* d = reinterpret_cast<float4*>(dst);
  for (int i = threadIdx.x; i < n / 4; i += blockDim.x) d[i] = __ldg(s + i);
#else
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
#endif
}

/// One net over the period: its input in ([F]), its condition cnd ([condition_size][F]); the
/// last head's output, scaled by head_scale, to dst ([rows][F]).
template <bool kSharedWeights>
__device__ void a2_net(const A2Args& p, const A2NetDesc& N, float* st, long long pos, int F,
                       const float* in, const float* cnd, float* dst, const A2Buffers& B,
                       float* staged) {
  if constexpr (kSharedWeights) {
    __syncthreads();  // the previous net's weights are no longer read
    a2_stage(staged, N.weights, N.weight_floats);
    __syncthreads();
  }
  const A2Weights<!kSharedWeights> w{kSharedWeights ? staged : N.weights};
  float *x = B.xa, *prev = B.xb;
  int rows = 1;
  for (int a = 0; a < N.num_arrays; ++a) {
    const A2ArrayDesc& A = p.arrays[N.first_array + a];
    const int C = A.rechannel.out, Hin = A.head.in;
    const float* src = a == 0 ? in : prev;  // the signal, or the previous array's output
    for (int i = threadIdx.x; i < (C + Hin) * F; i += blockDim.x) {
      const int r = i / F, t = i - r * F;
      if (r < C)
        x[i] = a2_conv1x1_row(w, A.rechannel, src, F, r, t);
      else  // the head accumulator starts from the previous array's head output
        B.acc[i - C * F] = a == 0 ? 0.0f : B.y[i - C * F];
    }
    __syncthreads();
    for (int l = 0; l < A.num_layers; ++l)
      a2_layer(p.layers[A.first_layer + l], w, st, pos, F, cnd, x, B);
    float* ring = st + A.head_ring;
    const int len = A.head_ring_mask + 1;
    for (int i = threadIdx.x; i < Hin * F; i += blockDim.x) {
      const int r = i / F, t = i - r * F;
      ring[r * len + static_cast<int>((pos + t) & A.head_ring_mask)] = B.acc[i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < A.head.out * F; i += blockDim.x) {
      const int r = i / F, t = i - r * F;
      B.y[i] = a2_conv_row(w, A.head, ring, A.head_ring_mask, pos, r, t);
    }
    __syncthreads();
    rows = A.head.out;
    float* swap = x;
    x = prev;
    prev = swap;
  }
  const float scale = w[N.head_scale];
  for (int i = threadIdx.x; i < rows * F; i += blockDim.x) dst[i] = scale * B.y[i];
  __syncthreads();
}

/// An LSTM over the period, as cpu_lstm.cpp: frame after frame, each layer's hidden units
/// across the threads (h and c in its state), the head on thread 0; the output to dst ([F]).
template <bool kSharedWeights>
__device__ void a2_lstm(const A2NetDesc& N, float* st, int F, const float* in, float* dst,
                        const A2Buffers& B, float* staged) {
  if constexpr (kSharedWeights) {
    __syncthreads();
    a2_stage(staged, N.weights, N.weight_floats);
    __syncthreads();
  }
  const A2Weights<!kSharedWeights> w{kSharedWeights ? staged : N.weights};
  const int H = N.lstm_hidden;
  float* hnew = B.z;  // [H]
  for (int t = 0; t < F; ++t) {
    for (int l = 0; l < N.lstm_layers; ++l) {
      float* h = st + l * 2 * H;
      float* c = h + H;
      const float* below = l == 0 ? in + t : st + (l - 1) * 2 * H;  // the layer's input x
      const int nx = N.lstm_in[l], cols = nx + H;
      for (int u = threadIdx.x; u < H; u += blockDim.x) {
        float g[4];
        for (int q = 0; q < 4; ++q) {
          const int row = N.lstm_w[l] + (q * H + u) * cols;
          float sum = 0.0f;
          for (int j = 0; j < nx; ++j) sum += w[row + j] * below[j];
          for (int j = 0; j < H; ++j) sum += w[row + nx + j] * h[j];
          g[q] = sum + w[N.lstm_b[l] + q * H + u];
        }
        c[u] = sigmoid(g[1]) * c[u] + sigmoid(g[0]) * fast_tanh(g[2]);
        hnew[u] = sigmoid(g[3]) * fast_tanh(c[u]);
      }
      __syncthreads();
      for (int u = threadIdx.x; u < H; u += blockDim.x) h[u] = hnew[u];
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      const float* h = st + (N.lstm_layers - 1) * 2 * H;
      float y = 0.0f;
      for (int u = 0; u < H; ++u) y += w[N.lstm_head_w + u] * h[u];
      dst[t] = y + w[N.lstm_head_b];
    }
  }
  __syncthreads();
}

template <bool kSharedWeights>
__device__ void wavenet_a2_period(const A2Args& p, float* smem, int F) {
  const int b = blockIdx.x;
  const A2InstanceDesc& I = p.instances[b];
  int* want = reinterpret_cast<int*>(smem);  // 4 floats: the size asked for, read once
  float* staged = smem + 4;
  float* next = staged + (kSharedWeights ? p.staged_floats : 0);
  const long rows = static_cast<long>(p.widest) * F;
  A2Buffers B;
  B.sig = next;
  B.cond = B.sig + F;
  B.xa = B.cond + rows;
  B.xb = B.xa + rows;
  B.z = B.xb + rows;
  B.h = B.z + rows;
  B.tc = B.h + rows;
  B.acc = B.tc + rows;
  B.y = B.acc + rows;
  float* outs = B.y + rows;  // [max_sizes][F]
  float* st = p.state + I.state;
  const long long pos = p.positions[b];
  for (int t = threadIdx.x; t < F; t += blockDim.x) B.sig[t] = p.inputs[b][t];
  if (threadIdx.x == 0) *want = I.num_sizes > 1 ? p.wanted[b] : 0;
  __syncthreads();
  for (int s = 0; s < I.num_sizes; ++s) {
    const A2NetDesc& N = p.nets[I.net[s]];
    if (N.lstm_layers > 0) {
      a2_lstm<kSharedWeights>(N, st + I.net_state[s], F, B.sig, outs + s * F, B, staged);
      continue;
    }
    const float* cnd = B.sig;
    if (N.condition >= 0) {
      a2_net<kSharedWeights>(p, p.nets[N.condition], st + I.condition_state[s], pos, F, B.sig,
                             B.sig, B.cond, B, staged);
      cnd = B.cond;
    }
    a2_net<kSharedWeights>(p, N, st + I.net_state[s], pos, F, B.sig, cnd, outs + s * F, B, staged);
  }
  float* out = p.outputs[b];
  SizeFade f = p.fades[b];
  if (f.fading_from < 0 && *want != f.active) f = {*want, f.active, 0};
  const float* now = outs + f.active * F;
  constexpr int kFade = Processor::kSizeCrossfadeFrames;
  if (f.fading_from < 0) {
    for (int t = threadIdx.x; t < F; t += blockDim.x) out[t] = now[t];
  } else {
    const float* was = outs + f.fading_from * F;
    constexpr float step = 1.0f / kFade;
    for (int t = threadIdx.x; t < F; t += blockDim.x) {
      const int at = f.faded + t;
      const float g = at < kFade ? static_cast<float>(at) * step : 1.0f;
      out[t] = was[t] + g * (now[t] - was[t]);
    }
    f.faded = f.faded + F < kFade ? f.faded + F : kFade;
    if (f.faded >= kFade) f.fading_from = -1;
  }
  __syncthreads();  // every thread has read the instance's fade state
  if (threadIdx.x == 0) {
    p.fades[b] = f;
    p.positions[b] = pos + F;
  }
}

#ifdef __CUDACC__
// Up to 512 threads a block (CudaBatch's choice): registers capped to fit.
template <bool kSharedWeights>
__global__ void __launch_bounds__(512)
    wavenet_a2_period_kernel(const __grid_constant__ A2Args p, int frames) {
  extern __shared__ float4 smem4[];
  wavenet_a2_period<kSharedWeights>(p, reinterpret_cast<float*>(smem4), frames);
}
#endif

}  // namespace sigpu::nam::cuda
