// Strict mode for int8 LLRs with two sub-decoders per thread: sub-decoders t and t + P / 2 of a
// code block share thread t, their metrics in the two 16-bit halves of MetricPair registers
// (turbo/metric_pair.hpp), so that each add and max of the trellis advances both. The trellis
// code is the other kernels' (decode_window_two_chains); the results are the block kernel's and
// the CPU's bit for bit, since with int8 LLRs every metric fits in 16 bits.
//
// It takes batches in which every sub-block is one whole window (K = 8 P, e.g. K = 6144 at
// P = 768): no alpha checkpoints, both sub-blocks of a thread as long as each other, and all of
// a block's sub-decoders in one round of at most kBlockThreads threads (BlockArrays' shared
// memory, as the block kernel).
#pragma once

#include <cstdint>

#include "turbo/cuda/block_kernel.cuh"
#include "turbo/metric_pair.hpp"

namespace sigpu::turbo::cuda {

/// Whether the pair kernel takes a code block of K bits on P sub-decoders.
__host__ __device__ constexpr bool pair_kernel_fits(int K, int P) {
  return P % 2 == 0 && K == kWindow * P && P / 2 <= kBlockThreads && P >= kBlockKernelMinP;
}

/// One half-iteration of the two sub-decoders of entries e0 and e1 (whole windows): al holds
/// their alpha at the start on entry and at the end on return, be beta at the end and then at
/// the start.
template <class Tr>
__device__ __forceinline__ void decode_pair_window(const SharedIo<Tr>& io, int K, int f2, int c,
                                                   SubBlockEntry e0, SubBlockEntry e1,
                                                   MetricPair (&al)[8], MetricPair (&be)[8]) {
  using M = typename Tr::Metric;
  constexpr int W = kWindow;
  const int two_f2 = (2 * f2) % K;
  const int k0 = static_cast<int>(e0.x & 0xFFFFu), k1 = static_cast<int>(e1.x & 0xFFFFu);
  int p0 = c == 1 ? static_cast<int>(e0.y & 0xFFFFu) : k0;
  int g0 = c == 1 ? static_cast<int>(e0.y >> 16) : 1;
  int p1 = c == 1 ? static_cast<int>(e1.y & 0xFFFFu) : k1;
  int g1 = c == 1 ? static_cast<int>(e1.y >> 16) : 1;
  MetricPair A[W], Lp[W];
  int pos0[W], pos1[W];
#pragma unroll
  for (int j = 0; j < W; ++j) {
    pos0[j] = p0;
    pos1[j] = p1;
    A[j] = MetricPair::pack(io.a(p0), io.a(p1));
    Lp[j] = MetricPair::pack(io.lp(k0 + j), io.lp(k1 + j));
    next_position(c, K, two_f2, p0, g0);
    next_position(c, K, two_f2, p1, g1);
  }
  RegisterAlpha<MetricPair, W> rows;
  decode_window_two_chains<W, false>(al, be, A, Lp, rows, [&](int j, MetricPair le) {
    const M l0 = le.lo(), l1 = le.hi();
    io.put(pos0[j], Tr::extrinsic(l0, io.scale, io.scale_q4));
    io.put(pos1[j], Tr::extrinsic(l1, io.scale, io.scale_q4));
    if (io.deciding) {
      io.decide(pos0[j], A[j].lo() + l0);
      io.decide(pos1[j], A[j].hi() + l1);
    }
  });
}

/// Strict mode, all iterations of one code block per thread block, P / 2 threads (rounded up to
/// a warp) for P sub-decoders, every block pair_kernel_fits; BlockSmem::bytes(K, P) of dynamic
/// shared memory. Arguments as StrictBlockKernel's (no checkpoints: no scratch).
template <class Tr>
__global__ void __launch_bounds__(kBlockThreads, 1)
    StrictPairKernel(const BlockDesc* __restrict__ blocks, const typename Tr::Llr* __restrict__ llr,
                     int iterations, float scale, int scale_q4, std::uint8_t* bits, float* llr_out,
                     EarlyStop stop) {
  static_assert(sizeof(typename Tr::Llr) == 1, "16-bit metrics are exact for int8 LLRs only");
  extern __shared__ __align__(16) unsigned char smem[];
  const BlockDesc d = blocks[blockIdx.x];
  const int K = d.K, P = d.P, H = P / 2, t = static_cast<int>(threadIdx.x);
  const auto sh = BlockArrays<Tr>::load(smem, d, llr + d.llr_offset);
  const bool active = t < H;
  const int i0 = t, i1 = t + H;  // i0 + 1 <= H < P - 1: only i1 can be the last

  sh.decode(K, iterations, scale, scale_q4, bits + d.bit_offset,
            llr_out ? llr_out + d.bit_offset : nullptr, stop, [&](const SharedIo<Tr>& io, int c) {
              MetricPair al[8], be[8];
              SubBlockEntry e0{}, e1{};
              if (active) {
                e0 = sh.sub[i0];
                e1 = sh.sub[i1];
#pragma unroll
                for (int s = 0; s < 8; ++s) {
                  const int start =
                      i0 > 0 ? sh.bound(c, 0, s, i0) : (s == 0 ? 0 : MetricPair::kNeg16);
                  al[s] = MetricPair::pack(start, sh.bound(c, 0, s, i1));
                  be[s] = MetricPair::pack(
                      sh.bound(c, 1, s, i0 + 1),
                      i1 == P - 1 ? sh.beta_at_k[c * 8 + s] : sh.bound(c, 1, s, i1 + 1));
                }
              }
              __syncthreads();  // every old metric has been read
              if (!active) return;
              decode_pair_window<Tr>(io, K, d.f2, c, e0, e1, al, be);
#pragma unroll
              for (int s = 0; s < 8; ++s) {
                sh.bound(c, 0, s, i0 + 1) = al[s].lo();
                if (i1 < P - 1) sh.bound(c, 0, s, i1 + 1) = al[s].hi();
                if (i0 > 0) sh.bound(c, 1, s, i0) = be[s].lo();
                sh.bound(c, 1, s, i1) = be[s].hi();
              }
            });
}

}  // namespace sigpu::turbo::cuda
