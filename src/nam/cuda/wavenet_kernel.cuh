// One launch advances every WaveNet instance by one period: a block per instance, all layers
// of all layer arrays in sequence inside the block (__syncthreads between steps), so a period
// costs one launch whatever the depth. Activations of the period live in shared memory,
// channel-major ([channel][frame]); each layer's input history is a ring in global memory
// ([channel][ring]) that the dilated taps read. A warp covers 32 frames of one output channel:
// its weight reads are broadcasts and its history reads are coalesced.
#pragma once

#include "nam/activation.hpp"
#include "nam/cuda/net_desc.hpp"

namespace sigpu::nam::cuda {

// Stages an instance's weights into shared memory (16-byte copies; weight_floats % 4 == 0).
__device__ inline void stage_weights(float* dst, const float* src, int n) {
  const float4* s = reinterpret_cast<const float4*>(src);
  float4* d = reinterpret_cast<float4*>(dst);
  for (int i = threadIdx.x; i < n / 4; i += blockDim.x) d[i] = __ldg(s + i);
}

template <bool kSharedWeights>
__global__ void wavenet_period_kernel(const __grid_constant__ WnNetDesc net,
                                      const float* const* weights, float* state,
                                      long long* positions, const float* const* inputs,
                                      float* const* outputs, int frames) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int b = blockIdx.x;
  const int F = frames;
  const float* w = weights[b];
  float* sw = smem;
  float* act = smem + (kSharedWeights ? net.weight_floats : 0);
  float* cond = act;                    // [F]
  float* x = cond + F;                  // [widest][F] this layer's input
  float* xn = x + net.widest * F;       // [widest][F] its output
  float* z = xn + net.widest * F;       // [widest][F] activations
  float* head = z + net.widest * F;     // [widest][F] head accumulator
  float* hout = head + net.widest * F;  // [widest][F] head output
  if constexpr (kSharedWeights) {
    stage_weights(sw, w, net.weight_floats);
    w = sw;
  }
  float* st = state + static_cast<long long>(b) * net.state_floats;
  const long long pos = positions[b];
  for (int t = threadIdx.x; t < F; t += blockDim.x) cond[t] = inputs[b][t];
  __syncthreads();

  const float* src = cond;  // the array's input, [in][F]
  for (int a = 0; a < net.num_arrays; ++a) {
    const WnArrayDesc& A = net.arrays[a];
    const int C = A.channels, K = A.kernel;
    const Activation fn = static_cast<Activation>(A.activation);
    {
      const WnLayerDesc& L0 = net.layers[A.first_layer];
      float* ring = st + L0.ring;
      for (int i = threadIdx.x; i < C * F; i += blockDim.x) {
        const int o = i / F, t = i - o * F;
        float v = 0;
        for (int j = 0; j < A.in; ++j) v += w[A.rechannel_w + o * A.in + j] * src[j * F + t];
        x[i] = v;
        ring[o * (L0.ring_mask + 1) + static_cast<int>((pos + t) & L0.ring_mask)] = v;
        head[i] = a == 0 ? 0.0f : hout[i];
      }
    }
    __syncthreads();
    for (int l = 0; l < A.num_layers; ++l) {
      const WnLayerDesc& L = net.layers[A.first_layer + l];
      const float* ring = st + L.ring;
      const int rlen = L.ring_mask + 1;
      for (int i = threadIdx.x; i < C * F; i += blockDim.x) {
        const int o = i / F, t = i - o * F;
        float za = w[L.conv_b + o];
        float zb = A.gated ? w[L.conv_b + C + o] : 0.0f;
        const float* wa = w + L.conv_w + o * C * K;
        const float* wb = wa + C * C * K;
        for (int c = 0; c < C; ++c) {
          for (int k = 0; k < K - 1; ++k) {
            const long long tap = pos + t - static_cast<long long>(L.dilation) * (K - 1 - k);
            const float v = ring[c * rlen + static_cast<int>(tap & L.ring_mask)];
            za += wa[c * K + k] * v;
            if (A.gated) zb += wb[c * K + k] * v;
          }
          const float v = x[c * F + t];
          za += wa[c * K + K - 1] * v;
          if (A.gated) zb += wb[c * K + K - 1] * v;
        }
        za += w[L.mixin_w + o] * cond[t];
        float y = activate(fn, za);
        if (A.gated) {
          zb += w[L.mixin_w + C + o] * cond[t];
          y *= sigmoid(zb);
        }
        z[i] = y;
        head[i] += y;
      }
      __syncthreads();
      const bool last = l + 1 == A.num_layers;
      float* next_ring = last ? nullptr : st + net.layers[A.first_layer + l + 1].ring;
      const int next_mask = last ? 0 : net.layers[A.first_layer + l + 1].ring_mask;
      for (int i = threadIdx.x; i < C * F; i += blockDim.x) {
        const int o = i / F, t = i - o * F;
        float v = x[i] + w[L.out_b + o];
        const float* wo = w + L.out_w + o * C;
        for (int c = 0; c < C; ++c) v += wo[c] * z[c * F + t];
        xn[i] = v;
        if (!last) next_ring[o * (next_mask + 1) + static_cast<int>((pos + t) & next_mask)] = v;
      }
      __syncthreads();
      float* swap = x;
      x = xn;
      xn = swap;
    }
    for (int i = threadIdx.x; i < A.head_size * F; i += blockDim.x) {
      const int j = i / F, t = i - j * F;
      float v = A.head_b >= 0 ? w[A.head_b + j] : 0.0f;
      const float* wh = w + A.head_w + j * C;
      for (int c = 0; c < C; ++c) v += wh[c] * head[c * F + t];
      hout[i] = v;
    }
    __syncthreads();
    // The next array reads this one's last layer output (still in x after the swap).
    float* swap = x;
    x = xn;
    xn = swap;
    src = xn;
  }
  const float scale = w[net.head_scale];
  for (int t = threadIdx.x; t < F; t += blockDim.x) outputs[b][t] = scale * hout[t];
  if (threadIdx.x == 0) positions[b] = pos + F;
}

}  // namespace sigpu::nam::cuda
