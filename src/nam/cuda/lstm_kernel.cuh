// One launch advances every LSTM instance by one period: a warp per instance (the recurrence
// is serial in time), lanes split the hidden units; the cell inputs [x; h] of every layer sit
// in shared memory, and h, c go back to the instance's state at the end of the period.
#pragma once

#include "nam/activation.hpp"
#include "nam/cuda/net_desc.hpp"
#include "nam/cuda/wavenet_kernel.cuh"

namespace sigpu::nam::cuda {

template <bool kSharedWeights>
__global__ void lstm_period_kernel(const __grid_constant__ LstmNetDesc net,
                                   const float* const* weights, float* state,
                                   const float* const* inputs, float* const* outputs, int frames) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const int b = blockIdx.x, lane = threadIdx.x, H = net.hidden;
  const float* w = weights[b];
  if constexpr (kSharedWeights) {
    stage_weights(smem, w, net.weight_floats);
    w = smem;
  }
  // Per layer, 3 H floats: the cell input [x (in <= H floats); h (H)], then c (H).
  float* cells = smem + (kSharedWeights ? net.weight_floats : 0);
  float* st = state + static_cast<long long>(b) * net.state_floats;
  auto xh = [&](int l) { return cells + l * 3 * H; };
  for (int l = 0; l < net.num_layers; ++l) {
    const int in = net.layers[l].in;
    for (int u = lane; u < H; u += 32) {
      xh(l)[in + u] = st[l * 2 * H + u];
      xh(l)[in + H + u] = st[l * 2 * H + H + u];
    }
  }
  __syncwarp();
  const float* in_b = inputs[b];
  float* out_b = outputs[b];
  for (int t = 0; t < frames; ++t) {
    if (lane == 0) xh(0)[0] = in_b[t];
    __syncwarp();
    for (int l = 0; l < net.num_layers; ++l) {
      const LstmLayerDesc& L = net.layers[l];
      float* v = xh(l);
      const int cols = L.in + H;
      float hnew[4];  // lanes own units lane, lane + 32, ... (H <= 128)
      int k = 0;
      for (int u = lane; u < H; u += 32, ++k) {
        float g[4];
        for (int q = 0; q < 4; ++q) {
          const float* row = w + L.w + (q * H + u) * cols;
          float s = 0;
          for (int j = 0; j < cols; ++j) s += row[j] * v[j];
          g[q] = s + w[L.b + q * H + u];
        }
        float& c = v[L.in + H + u];
        c = sigmoid(g[1]) * c + sigmoid(g[0]) * fast_tanh(g[2]);
        hnew[k] = sigmoid(g[3]) * fast_tanh(c);
      }
      __syncwarp();
      k = 0;
      for (int u = lane; u < H; u += 32, ++k) {
        v[L.in + u] = hnew[k];
        if (l + 1 < net.num_layers) xh(l + 1)[u] = hnew[k];
      }
      __syncwarp();
    }
    const float* h = xh(net.num_layers - 1) + net.layers[net.num_layers - 1].in;
    float y = 0;
    for (int u = lane; u < H; u += 32) y += w[net.head_w + u] * h[u];
    for (int off = 16; off > 0; off >>= 1) y += __shfl_down_sync(0xffffffffu, y, off);
    if (lane == 0) out_b[t] = y + w[net.head_b];
  }
  for (int l = 0; l < net.num_layers; ++l) {
    const int in = net.layers[l].in;
    for (int u = lane; u < H; u += 32) {
      st[l * 2 * H + u] = xh(l)[in + u];
      st[l * 2 * H + H + u] = xh(l)[in + H + u];
    }
  }
}

}  // namespace sigpu::nam::cuda
