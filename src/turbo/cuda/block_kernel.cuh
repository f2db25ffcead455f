// Strict mode with one thread block per code block and every iteration in one launch.
//
// The block's LLRs and its extrinsics (one array: a half-iteration reads La at a position and
// writes Le at the same position, and only the sub-decoder that owns the position touches it)
// live in shared memory, with the boundary state metrics of both components; a __syncthreads
// ends a half-iteration. Code blocks are independent, so strict mode needs no grid-wide barrier
// and no kernel boundary: the interleaver's gathers and scatters become shared-memory accesses,
// and the only device-memory traffic left is reading the block's LLRs once, writing the hard
// decisions, and the alpha checkpoints of sub-blocks longer than a window.
//
// Each thread runs sub-decoders i = t, t + T, t + 2T, ... ("rounds") of the block with the
// alpha of its window in registers (RegisterAlpha). The arithmetic is decode_windowed's, in
// float for every LLR type (ExactFloatTraits: exact for the fixed-point decoders), so the
// results are those of the other strict kernels and of the CPU.
//
// The boundary metrics are stored once (not double-buffered by iteration parity: that would not
// fit for P = 768): in each round every thread first reads the old metrics it starts from, a
// __syncthreads follows, and only then does anyone write new ones. Within a round sub-decoder i
// writes alpha into slot i + 1, which sub-decoder i + 1 read before the barrier; the last thread
// of a round holds its alpha in registers until the next round's first thread has read the old
// value of that slot (after that round's barrier). Beta goes into slot i, which sub-decoder
// i - 1 read in this round or an earlier one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "turbo/cuda/kernels.cuh"

namespace sigpu::turbo::cuda {

/// Threads per code block (at most): P = 768 runs as two rounds of 384 sub-decoders. With one
/// block per SM (the shared memory of K = 6144, P = 768 allows no more) this leaves up to 168
/// registers per thread for the alpha window (64) and the rest.
inline constexpr int kBlockThreads = 384;
/// Fewer sub-decoders per code block than a warp leave most of an SM idle: the batch runs on the
/// other strict kernels (P = 64 is the smallest measured here: 2-5x faster than those at 1536
/// blocks).
inline constexpr int kBlockKernelMinP = 32;

/// Position of information bit n in the shared arrays (floats): one word of padding after every
/// 32, so that the sub-decoders of a warp, reading runs of consecutive bits from starts 8 bits
/// apart (component 1 at K / P = 8), hit different banks.
__host__ __device__ constexpr int padded(int n) {
  return n + n / 32;
}

/// The block kernel computes in float for every LLR type (ExactFloatTraits, map_decoder.hpp):
/// one shared-memory layout for all. It is not faster for fixed point: float adds run at twice
/// the rate of integer ones, but the kernel is bound by instruction issue and int32 needs fewer
/// instructions (three-operand adds); docs/turbo.md has the measurements.
template <class Tr>
struct BlockMath {
  using type = Tr;  // FloatTraits
};
template <typename T>
struct BlockMath<FixedTraits<T>> {
  using type = ExactFloatTraits<T>;
};

/// Shared memory of one code block: Ls, Le, Lp of component 1 and of component 2 (padded
/// floats, each rounded up to 16 bytes), beta at K of both components, then the boundary metrics
/// [component][alpha, beta][state][slot 0..P] (consecutive slots: consecutive banks).
struct BlockSmem {
  static constexpr std::size_t kTailBetaBytes = 16 * sizeof(float);
  __host__ __device__ static constexpr std::size_t array_bytes(int K) {
    return (static_cast<std::size_t>(padded(K)) * sizeof(float) + 15) / 16 * 16;
  }
  __host__ __device__ static constexpr std::size_t bytes(int K, int P) {
    return 4 * array_bytes(K) + kTailBetaBytes +
           std::size_t(4) * 8 * (static_cast<std::size_t>(P) + 1) * sizeof(float);
  }
};

/// The inputs in shared memory (padded positions). Ls and the parity are the block's LLRs; ext
/// holds La of a position until its sub-decoder writes Le there.
template <class Ct>
struct SharedIo : IoCommon<Ct> {
  const float* sys = nullptr;
  const float* par = nullptr;
  float* ext = nullptr;
  __device__ __forceinline__ float a(int n) const {
    const int at = padded(n);
    return sys[at] + ext[at];
  }
  __device__ __forceinline__ float lp(int k) const { return par[padded(k)]; }
  __device__ __forceinline__ void put(int n, float le) const { ext[padded(n)] = le; }
};

/// Strict mode, all iterations of one code block per thread block (blockDim.x threads, any
/// number; BlockSmem::bytes(K, P) of dynamic shared memory for the largest K and P of the
/// batch). scratch: 8 floats per bit for the alpha checkpoints (used where K / P > kWindow).
/// bits / llr_out (llr_out may be null): the decisions of the last iteration, K per block.
template <class Tr>
__global__ void __launch_bounds__(kBlockThreads, 1)
    StrictBlockKernel(const BlockDesc* __restrict__ blocks,
                      const typename Tr::Llr* __restrict__ llr, int iterations, float scale,
                      int scale_q4, float* scratch, std::uint8_t* bits, float* llr_out) {
  using Ct = typename BlockMath<Tr>::type;
  using M = float;
  extern __shared__ __align__(16) unsigned char smem[];
  const BlockDesc d = blocks[blockIdx.x];
  const int K = d.K, P = d.P, T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
  const typename Tr::Llr* g_llr = llr + d.llr_offset;
  const std::size_t array_floats = BlockSmem::array_bytes(K) / sizeof(float);
  auto* s_sys = reinterpret_cast<float*>(smem);
  float* s_ext = s_sys + array_floats;
  float* s_par = s_sys + 2 * array_floats;        // component c at c * array_floats
  float* s_tail_beta = s_sys + 4 * array_floats;  // [component][state]
  auto* s_bound =
      reinterpret_cast<M*>(smem + 4 * BlockSmem::array_bytes(K) + BlockSmem::kTailBetaBytes);
  const int slots = P + 1;
  for (int n = t; n < K; n += T) {
    const int at = padded(n);
    s_sys[at] = static_cast<float>(g_llr[n]);
    s_ext[at] = 0.0f;
    s_par[at] = static_cast<float>(g_llr[K + 4 + n]);
    s_par[array_floats + at] = static_cast<float>(g_llr[2 * (K + 4) + n]);
  }
  if (t < 2) {  // beta at K of component t: the same in every iteration
    M be[8];
    tail_beta_from<Ct, false>(
        [&](int stream, int j) { return static_cast<float>(g_llr[stream * (K + 4) + K + j]); }, t,
        be);
#pragma unroll
    for (int s = 0; s < 8; ++s) s_tail_beta[t * 8 + s] = be[s];
  }
  for (int x = t; x < 4 * 8 * slots; x += T) s_bound[x] = M(0);  // uniform: the first iteration
  __syncthreads();
  auto bound = [&](int c, int is_beta, int s, int slot) -> M& {
    return s_bound[((c * 2 + is_beta) * 8 + s) * slots + slot];
  };

  M held[8];  // the last thread's alpha of a round, for the next round's first sub-decoder
  for (int it = 0; it < iterations; ++it) {
    for (int c = 0; c < 2; ++c) {
      SharedIo<Ct> io;
      io.sys = s_sys;
      io.par = s_par + c * array_floats;
      io.ext = s_ext;
      io.scale = scale;
      io.scale_q4 = scale_q4;
      if (it == iterations - 1 && c == 1) {
        io.bits = bits + d.bit_offset;
        io.llr_out = llr_out ? llr_out + d.bit_offset : nullptr;
      }
      for (int r0 = 0; r0 < P; r0 += T) {
        const int i = r0 + t;
        const bool active = i < P;
        M al[8], be[8];
        if (active) {
#pragma unroll
          for (int s = 0; s < 8; ++s)
            al[s] = i > 0 ? bound(c, 0, s, i) : (s == 0 ? M(0) : M(Ct::kNeg));
          if (i == P - 1) {
#pragma unroll
            for (int s = 0; s < 8; ++s) be[s] = s_tail_beta[c * 8 + s];
          } else {
#pragma unroll
            for (int s = 0; s < 8; ++s) be[s] = bound(c, 1, s, i + 1);
          }
        }
        __syncthreads();  // every old metric this round starts from has been read
        if (r0 > 0 && t == T - 1) {
#pragma unroll
          for (int s = 0; s < 8; ++s) bound(c, 0, s, r0) = held[s];
        }
        if (active) {
          RegisterAlpha<M, kWindow> alpha;
          M* ckpt = scratch + (static_cast<std::size_t>(d.bit_offset) + sub_begin(K, P, i)) * 8;
          const SubBlock sb{K, d.f1, d.f2, c, sub_begin(K, P, i), sub_begin(K, P, i + 1)};
          decode_windowed<Ct, kWindow>(io, sb, al, be, ckpt, alpha, [&](const M(&a)[8]) {
            if (i == P - 1) return;
#pragma unroll
            for (int s = 0; s < 8; ++s) {
              if (t == T - 1)
                held[s] = a[s];
              else
                bound(c, 0, s, i + 1) = a[s];
            }
          });
          if (i > 0) {
#pragma unroll
            for (int s = 0; s < 8; ++s) bound(c, 1, s, i) = be[s];
          }
        }
      }
      __syncthreads();  // the half-iteration's extrinsics and metrics are complete
    }
  }
}

}  // namespace sigpu::turbo::cuda
