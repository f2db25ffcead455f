// Turbo decoder kernels. One thread per sub-decoder, its 8 state metrics in registers; the
// arithmetic is the CPU's (forward_step, backward_step, extrinsic_diff and Tr::extrinsic of
// turbo/map_decoder.hpp), only the memory traffic is organised for the GPU:
//
// - The sub-block is walked in windows of W bits. For each window the thread first loads its W
//   inputs (A = Ls + La through the interleaver, and Lp) into registers - independent loads, all
//   in flight together instead of one dependent global round trip per trellis step - then runs
//   the forward recursion over the window storing alpha in shared memory ([step][state][thread]:
//   conflict-free), then the backward recursion and the extrinsics reading alpha back.
// - A sub-block longer than W takes a first forward pass that keeps only one alpha checkpoint per
//   window (global memory, 1/W of the old traffic); the backward pass recomputes each window's
//   alpha from its checkpoint. Recomputing runs the same forward_step on the same inputs, so the
//   results are bit-identical to the CPU's stored alphas. A sub-block of at most W bits (K / P
//   <= 8, e.g. K = 6144, P = 768) needs no checkpoints and no first pass.
// - Each thread finds its code block through a per-sub-decoder table (one coalesced load)
//   instead of a binary search over the block descriptors.
//
// Why one thread per sub-decoder rather than 8 (one per state): with 8 threads each trellis
// step needs an exchange of the 8 metrics (shuffles) and a 2-way max per thread, about as many
// instructions as one thread doing all 8 states, plus the shuffle latency on the serial chain.
#pragma once

#include <cstdint>

#include "turbo/map_decoder.hpp"

namespace sigpu::turbo::cuda {

inline constexpr int kThreadsPerBlock = 128;
inline constexpr int kWindow = 8;

/// Loads that bypass L1 (cache at L2, coherent across SMs): loose mode reads values other
/// thread blocks write during the same launch.
struct CoherentLoad {
  template <typename T>
  __device__ static __forceinline__ T ld(const T* p) {
    return *static_cast<const volatile T*>(p);
  }
};

/// Strict mode: everything a half-iteration reads was written by an earlier launch.
struct ReadOnlyLoad {
  template <typename T>
  __device__ static __forceinline__ T ld(const T* p) {
    return __ldg(p);
  }
};

/// Sub-decoder i of block d for one half-iteration, windowed (see the top of this file).
/// ckpt: room for 8 metrics per window of this sub-block (global). sal: this block's shared
/// alpha window, sal[(j * 8 + s) * kThreadsPerBlock + threadIdx.x].
template <class Tr, int W, class Load>
__device__ __forceinline__ void decode_windowed(const HalfIteration<Tr>& h, const BlockDesc& d,
                                                int i, typename Tr::Metric* ckpt,
                                                typename Tr::Metric* sal) {
  using M = typename Tr::Metric;
  using Llr = typename Tr::Llr;
  const int K = d.K, P = d.P, c = h.component;
  const int begin = sub_begin(K, P, i), end = sub_begin(K, P, i + 1);
  const int len = end - begin;
  const Llr* __restrict__ sys = h.llr + d.llr_offset;
  const Llr* __restrict__ par = sys + static_cast<std::size_t>(K + 4) * (1 + c);
  const std::uint16_t* __restrict__ pi = h.pi + d.perm_offset;
  const std::uint16_t* __restrict__ pi_inv = h.pi_inv + d.perm_offset;
  const Llr* ext_in = h.ext_in + d.bit_offset;
  Llr* ext_out = h.ext_out + d.bit_offset;
  const int tid = threadIdx.x;

  M al[8], be[8];
  if (i == 0) {
#pragma unroll
    for (int s = 0; s < 8; ++s) al[s] = s == 0 ? M(0) : M(Tr::kNeg);
  } else {
    const M* src =
        bound_slot<Tr>(h.alpha_bounds, h.total_bounds, c, h.read_buf, d.bound_offset + i);
#pragma unroll
    for (int s = 0; s < 8; ++s) al[s] = Load::ld(src + s);
  }
  if (i == P - 1) {
    tail_beta<Tr, false>(sys, K, c, be);
  } else {
    const M* src =
        bound_slot<Tr>(h.beta_bounds, h.total_bounds, c, h.read_buf, d.bound_offset + i + 1);
#pragma unroll
    for (int s = 0; s < 8; ++s) be[s] = Load::ld(src + s);
  }

  M A[W], Lp[W];
  auto load_window = [&](int k0, int wl) {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if (j < wl) {
        const int k = k0 + j;
        int ks = k, ke;
        if (c == 0) {
          ke = __ldg(pi_inv + k);
        } else {
          ks = __ldg(pi + k);
          ke = ks;
        }
        A[j] = static_cast<M>(__ldg(sys + ks)) + static_cast<M>(Load::ld(ext_in + ke));
        Lp[j] = static_cast<M>(__ldg(par + k));
      }
    }
  };

  const int nwin = (len + W - 1) / W;
  if (nwin > 1) {  // checkpoint pass
    for (int w = 0; w < nwin; ++w) {
      const int k0 = begin + w * W, wl = min(W, end - k0);
#pragma unroll
      for (int s = 0; s < 8; ++s) ckpt[w * 8 + s] = al[s];
      load_window(k0, wl);
#pragma unroll
      for (int j = 0; j < W; ++j)
        if (j < wl) forward_step<false>(al, A[j], Lp[j]);
    }
    if (i < P - 1) {
      M* dst =
          bound_slot<Tr>(h.alpha_bounds, h.total_bounds, c, h.write_buf, d.bound_offset + i + 1);
#pragma unroll
      for (int s = 0; s < 8; ++s) dst[s] = al[s];
    }
  }

  for (int w = nwin - 1; w >= 0; --w) {
    const int k0 = begin + w * W, wl = min(W, end - k0);
    load_window(k0, wl);
    M a[8];
    if (nwin > 1) {
#pragma unroll
      for (int s = 0; s < 8; ++s) a[s] = ckpt[w * 8 + s];
    } else {
#pragma unroll
      for (int s = 0; s < 8; ++s) a[s] = al[s];
    }
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if (j < wl) {
#pragma unroll
        for (int s = 0; s < 8; ++s) sal[(j * 8 + s) * kThreadsPerBlock + tid] = a[s];
        forward_step<false>(a, A[j], Lp[j]);
      }
    }
    if (nwin == 1 && i < P - 1) {
      M* dst =
          bound_slot<Tr>(h.alpha_bounds, h.total_bounds, c, h.write_buf, d.bound_offset + i + 1);
#pragma unroll
      for (int s = 0; s < 8; ++s) dst[s] = a[s];
    }
#pragma unroll
    for (int j = W - 1; j >= 0; --j) {
      if (j < wl) {
        const int k = k0 + j;
        const M* row = sal + j * 8 * kThreadsPerBlock + tid;
        const M le =
            extrinsic_diff<false>([&](int s) { return row[s * kThreadsPerBlock]; }, be, Lp[j]);
        ext_out[k] = Tr::extrinsic(le, h.scale, h.scale_q4);
        if (h.bits)
          h.bits[d.bit_offset + (c == 0 ? k : __ldg(pi + k))] = (A[j] + le) < M(0) ? 1 : 0;
        backward_step<false>(be, A[j], Lp[j]);
      }
    }
  }
  if (i > 0) {
    M* dst = bound_slot<Tr>(h.beta_bounds, h.total_bounds, c, h.write_buf, d.bound_offset + i);
#pragma unroll
    for (int s = 0; s < 8; ++s) dst[s] = be[s];
  }
}

/// Strict mode: one half-iteration of every sub-decoder of the batch. sub_block[t]: the code
/// block of global sub-decoder t. scratch: 8 metrics per bit (checkpoints use 1 / kWindow).
template <class Tr>
__global__ void __launch_bounds__(kThreadsPerBlock)
    HalfIterationKernel(HalfIteration<Tr> h, const std::uint32_t* __restrict__ sub_block,
                        std::uint32_t total_subs, typename Tr::Metric* scratch) {
  using M = typename Tr::Metric;
  __shared__ M sal[kWindow * 8 * kThreadsPerBlock];
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total_subs) return;
  const BlockDesc d = h.blocks[__ldg(sub_block + t)];
  const int i = static_cast<int>(t - d.sub_offset);
  M* ckpt = scratch + (static_cast<std::size_t>(d.bit_offset) + sub_begin(d.K, d.P, i)) * 8;
  decode_windowed<Tr, kWindow, ReadOnlyLoad>(h, d, i, ckpt, sal);
}

/// Loose mode: every iteration in one launch. A sub-decoder never waits for another; it reads
/// the extrinsics and boundary metrics its neighbours have published so far (L2-coherent loads,
/// fenced stores), in whatever iteration they are.
template <class Tr>
__global__ void __launch_bounds__(kThreadsPerBlock)
    LooseKernel(HalfIteration<Tr> h, const typename Tr::Llr* ext1, const typename Tr::Llr* ext2,
                const std::uint32_t* __restrict__ sub_block, std::uint32_t total_subs,
                typename Tr::Metric* scratch, int iterations, std::uint8_t* bits) {
  using M = typename Tr::Metric;
  __shared__ M sal[kWindow * 8 * kThreadsPerBlock];
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total_subs) return;
  const BlockDesc d = h.blocks[__ldg(sub_block + t)];
  const int i = static_cast<int>(t - d.sub_offset);
  M* ckpt = scratch + (static_cast<std::size_t>(d.bit_offset) + sub_begin(d.K, d.P, i)) * 8;
  for (int it = 0; it < iterations; ++it) {
    for (int c = 0; c < 2; ++c) {
      HalfIteration<Tr> hc = h;
      hc.component = c;
      hc.read_buf = hc.write_buf = 0;
      hc.ext_in = c == 0 ? ext2 : ext1;
      hc.ext_out = const_cast<typename Tr::Llr*>(c == 0 ? ext1 : ext2);
      hc.bits = (it == iterations - 1 && c == 1) ? bits : nullptr;
      decode_windowed<Tr, kWindow, CoherentLoad>(hc, d, i, ckpt, sal);
      __threadfence();
    }
  }
}

}  // namespace sigpu::turbo::cuda
