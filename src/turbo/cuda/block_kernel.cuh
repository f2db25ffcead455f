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
// alpha of its window in registers (RegisterAlpha). The arithmetic is decode_windowed's in the
// decoder's own metric type (float, or int32 for fixed point, as on the CPU), so the results
// are those of the other strict kernels and of the CPU. The sub-blocks' bounds and QPP starting
// points are computed once per launch (SubBlockEntry).
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

/// Position of information bit n in the shared arrays (4-byte words): one word of padding after
/// every 32, so that the sub-decoders of a warp, reading runs of consecutive bits from starts 8
/// bits apart (component 1 at K / P = 8), hit different banks.
__host__ __device__ constexpr int padded(int n) {
  return n + n / 32;
}

/// Shared memory of one code block: Ls, Le, Lp of component 1 and of component 2 (padded words
/// of the metric type: float, or int32 for fixed point, each array rounded up to 16 bytes),
/// beta at K of both components, the boundary metrics [component][alpha, beta][state][slot
/// 0..P] (consecutive slots: consecutive banks), one SubBlockEntry per sub-decoder, the early
/// termination CRC's per-warp words (in the dynamic allocation, so that the size checks against
/// the device's limit count them), then the hard decisions, one bit each.
struct BlockSmem {
  static constexpr std::size_t kWord = 4;
  static constexpr std::size_t kTailBetaBytes = 16 * kWord;
  __host__ __device__ static constexpr std::size_t array_bytes(int K) {
    return (static_cast<std::size_t>(padded(K)) * kWord + 15) / 16 * 16;
  }
  __host__ __device__ static constexpr std::size_t bounds_bytes(int P) {
    return std::size_t(4) * 8 * (static_cast<std::size_t>(P) + 1) * kWord;
  }
  static constexpr std::size_t kCrcBytes = 16 * kWord;  ///< up to 512 threads
  __host__ __device__ static constexpr std::size_t crc_offset(int K, int P) {
    return 4 * array_bytes(K) + kTailBetaBytes + bounds_bytes(P) +
           static_cast<std::size_t>(P) * sizeof(uint2);  // SubBlockEntry
  }
  __host__ __device__ static constexpr std::size_t decisions_offset(int K, int P) {
    return crc_offset(K, P) + kCrcBytes;
  }
  __host__ __device__ static constexpr std::size_t bytes(int K, int P) {
    return decisions_offset(K, P) + (static_cast<std::size_t>(K + 31) / 32 * 4 + 15) / 16 * 16;
  }
};

/// What a sub-decoder needs of its sub-block in every half-iteration, computed once per launch:
/// x = begin | end << 16, y = pi(begin) | g(begin) << 16 (all below K <= 6144). The divisions
/// they take (sub_begin's 64-bit one, and the QPP's mod K) would otherwise run per sub-decoder
/// and half-iteration, which matters where a sub-block is only 8 bits long.
using SubBlockEntry = uint2;

/// The inputs in shared memory (padded positions). Ls and the parity are the block's LLRs; ext
/// holds La of a position until its sub-decoder writes Le there. M: the metric type.
template <class Tr>
struct SharedIo : IoCommon<Tr> {
  using typename IoCommon<Tr>::Llr;
  using typename IoCommon<Tr>::M;
  const M* sys = nullptr;
  const M* par = nullptr;
  M* ext = nullptr;
  __device__ __forceinline__ M a(int n) const {
    const int at = padded(n);
    return sys[at] + ext[at];
  }
  __device__ __forceinline__ M lp(int k) const { return par[padded(k)]; }
  __device__ __forceinline__ void put(int n, Llr le) const { ext[padded(n)] = static_cast<M>(le); }
  static constexpr bool kPackedPositions = false;

  /// The decisions, packed in shared memory (zeroed before each half-iteration that decides);
  /// the kernel copies the final ones out once. Byte stores to device memory at interleaved
  /// positions in every iteration that early termination decides would cost about as much as
  /// the iteration's trellis work.
  std::uint32_t* packed = nullptr;
  __device__ __forceinline__ void decide(int n, M app) const {
    if (app < M(0)) atomicOr(packed + (n >> 5), 1u << (n & 31));
    if (this->llr_out) this->llr_out[n] = static_cast<float>(app);
  }
};

/// The XOR of the CRC weights of a code block's one decisions (packed; weight of bit n:
/// crc_last[-n]), over the whole thread block (blockDim.x a multiple of 32). Each warp takes a
/// word at a time, a bit per lane, so that the weights it loads are consecutive; folding them
/// in as the decisions are made would load them at interleaved positions. The loads of kBatch
/// words go out together (K = 6144 on 12 warps: all at once): the weights come from L2 (the
/// block's shared memory leaves L1 little room), and one round trip per word made the check
/// cost most of an iteration.
__device__ __forceinline__ std::uint32_t packed_crc(const std::uint32_t* packed, int K,
                                                    const std::uint32_t* __restrict__ crc_last,
                                                    std::uint32_t* part) {
  constexpr int kBatch = 16;
  const int lane = static_cast<int>(threadIdx.x & 31), warps = static_cast<int>(blockDim.x >> 5);
  const int words = (K + 31) / 32;
  std::uint32_t r = 0;
  for (int q0 = static_cast<int>(threadIdx.x >> 5); q0 < words; q0 += kBatch * warps) {
    std::uint32_t w[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int q = q0 + b * warps, n = 32 * q + lane;
      w[b] = q < words && n < K ? __ldg(crc_last - n) : 0u;
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int q = q0 + b * warps;
      if (q < words && (packed[q] >> lane & 1u)) r ^= w[b];
    }
  }
  return block_xor(r, part);
}

/// Copies a code block's packed decisions (K a multiple of 4, as every LTE block size is) to
/// one byte per bit at bits (4-byte aligned), four bytes per store; every thread of the block
/// calls it.
__device__ __forceinline__ void unpack_decisions(const std::uint32_t* packed, int K,
                                                 std::uint8_t* bits) {
  auto* out = reinterpret_cast<std::uint32_t*>(bits);
  for (int q = threadIdx.x; q < K / 4; q += blockDim.x) {
    const std::uint32_t w = packed[q >> 3] >> ((q & 7) * 4);
    out[q] = (w & 1u) | (w >> 1 & 1u) << 8 | (w >> 2 & 1u) << 16 | (w >> 3 & 1u) << 24;
  }
}

/// Points io (SharedIo, or a class with the same members) at a code block's inputs in shared
/// memory for one half-iteration: last, the last half-iteration, also at where the block's
/// decisions go (bits, llr_out: the block's first; llr_out may be null).
template <class Io, typename M>
__device__ __forceinline__ void point_io(Io& io, const M* sys, const M* par, M* ext, float scale,
                                         int scale_q4, bool last, std::uint8_t* bits,
                                         float* llr_out) {
  io.sys = sys;
  io.par = par;
  io.ext = ext;
  io.scale = scale;
  io.scale_q4 = scale_q4;
  io.deciding = last;
  if (last) {
    io.bits = bits;
    io.llr_out = llr_out;
  }
}

/// A code block's arrays in shared memory (BlockSmem's layout for K, P), set up by every thread
/// of the thread block: the LLRs loaded, the extrinsics and boundary metrics zeroed (uniform
/// metrics: the first iteration), the sub-block table and beta at K computed. Shared by the
/// kernels that keep a code block on one thread block; ends with a __syncthreads.
template <class Tr>
struct BlockArrays {
  using M = typename Tr::Metric;
  static_assert(sizeof(M) == BlockSmem::kWord);
  M* sys;
  M* ext;
  M* par;        ///< component c at c * array_words
  M* beta_at_k;  ///< [component][state]: beta at K
  M* bounds;
  SubBlockEntry* sub;
  std::uint32_t* part;  ///< the CRC's per-warp words
  std::uint32_t* dec;   ///< the packed hard decisions
  int array_words, slots;

  /// Boundary metric s of slot 0..P (alpha or beta) of component c.
  __device__ __forceinline__ M& bound(int c, int is_beta, int s, int slot) const {
    return bounds[((c * 2 + is_beta) * 8 + s) * slots + slot];
  }

  __device__ static BlockArrays load(unsigned char* smem, const BlockDesc& d,
                                     const typename Tr::Llr* g_llr) {
    const int K = d.K, P = d.P, T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
    BlockArrays a;
    a.array_words = static_cast<int>(BlockSmem::array_bytes(K) / BlockSmem::kWord);
    a.slots = P + 1;
    a.sys = reinterpret_cast<M*>(smem);
    a.ext = a.sys + a.array_words;
    a.par = a.sys + 2 * a.array_words;
    a.beta_at_k = a.sys + 4 * a.array_words;
    a.bounds =
        reinterpret_cast<M*>(smem + 4 * BlockSmem::array_bytes(K) + BlockSmem::kTailBetaBytes);
    a.sub =
        reinterpret_cast<SubBlockEntry*>(smem + 4 * BlockSmem::array_bytes(K) +
                                         BlockSmem::kTailBetaBytes + BlockSmem::bounds_bytes(P));
    a.part = reinterpret_cast<std::uint32_t*>(smem + BlockSmem::crc_offset(K, P));
    a.dec = reinterpret_cast<std::uint32_t*>(smem + BlockSmem::decisions_offset(K, P));
    for (int n = t; n < K; n += T) {
      const int at = padded(n);
      a.sys[at] = static_cast<M>(g_llr[n]);
      a.ext[at] = M(0);
      a.par[at] = static_cast<M>(g_llr[K + 4 + n]);
      a.par[a.array_words + at] = static_cast<M>(g_llr[2 * (K + 4) + n]);
    }
    for (int i = t; i < P; i += T) {
      const SubBlock sb = make_sub_block(K, d.f1, d.f2, 1, P, i);
      a.sub[i] = make_uint2(static_cast<unsigned>(sb.begin | sb.end << 16),
                            static_cast<unsigned>(sb.pi0 | sb.g0 << 16));
    }
    if (t < 2) {  // beta at K of component t: the same in every iteration
      M be[8];
      tail_beta<Tr, Tr::kLogMap>(g_llr, K, t, be);
#pragma unroll
      for (int s = 0; s < 8; ++s) a.beta_at_k[t * 8 + s] = be[s];
    }
    for (int x = t; x < 4 * 8 * a.slots; x += T) a.bounds[x] = M(0);
    __syncthreads();
    return a;
  }

  /// Every iteration of the block (thread block), stopping early where stop says, then its
  /// decisions to bits (the block's first; llr_out likewise, may be null) and where it stopped.
  /// half(io, c) runs component c's sub-decoders for one half-iteration with io pointed at its
  /// inputs, where it decides at the block's packed decisions (zeroed first: half's first
  /// barrier orders that before any decision); a barrier follows it.
  template <class Half>
  __device__ void decode(int K, int iterations, float scale, int scale_q4, std::uint8_t* bits,
                         float* llr_out, const EarlyStop& stop, const Half& half) const {
    int stopped_at = 0;
    for (int it = 0; it < iterations && !stopped_at; ++it) {
      for (int c = 0; c < 2; ++c) {
        SharedIo<Tr> io;
        const bool deciding = c == 1 && stop.decides(it, iterations);
        point_io(io, sys, par + c * array_words, ext, scale, scale_q4, deciding, bits, llr_out);
        io.packed = dec;
        if (deciding)
          for (int x = static_cast<int>(threadIdx.x); x < (K + 31) / 32;
               x += static_cast<int>(blockDim.x))
            dec[x] = 0;
        half(io, c);
        __syncthreads();  // the half-iteration's extrinsics, metrics and decisions are complete
      }
      // Every thread gets the same answer, so they leave the loop together.
      if (stop.checks(it, iterations) && packed_crc(dec, K, stop.weights + (K - 1), part) == 0)
        stopped_at = it + 1;
    }
    unpack_decisions(dec, K, bits);
    if (stop.weights && threadIdx.x == 0) stop.done_at[blockIdx.x] = stopped_at;
  }
};

/// Strict mode, all iterations of one code block per thread block (blockDim.x threads, any
/// number; BlockSmem::bytes(K, P) of dynamic shared memory for the largest K and P of the
/// batch). scratch: 8 floats per bit for the alpha checkpoints (used where K / P > kWindow).
/// bits / llr_out (llr_out may be null): the decisions of the last iteration, K per block.
/// stop: early termination; with it on, stop.done_at[block] is the iteration the block stopped
/// after, or 0.
template <class Tr>
__global__ void __launch_bounds__(kBlockThreads, 1)
    StrictBlockKernel(const BlockDesc* __restrict__ blocks,
                      const typename Tr::Llr* __restrict__ llr, int iterations, float scale,
                      int scale_q4, typename Tr::Metric* scratch, std::uint8_t* bits,
                      float* llr_out, EarlyStop stop) {
  using M = typename Tr::Metric;
  extern __shared__ __align__(16) unsigned char smem[];
  static_assert(kBlockThreads / 32 * 4 <= BlockSmem::kCrcBytes);
  const BlockDesc d = blocks[blockIdx.x];
  const int K = d.K, P = d.P, T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
  const auto sh = BlockArrays<Tr>::load(smem, d, llr + d.llr_offset);

  M held[8];  // the last thread's alpha of a round, for the next round's first sub-decoder
  sh.decode(K, iterations, scale, scale_q4, bits + d.bit_offset,
            llr_out ? llr_out + d.bit_offset : nullptr, stop, [&](const SharedIo<Tr>& io, int c) {
              for (int r0 = 0; r0 < P; r0 += T) {
                const int i = r0 + t;
                const bool active = i < P;
                M al[8], be[8];
                SubBlockEntry e{};
                if (active) {
                  e = sh.sub[i];
#pragma unroll
                  for (int s = 0; s < 8; ++s)
                    al[s] = i > 0 ? sh.bound(c, 0, s, i) : (s == 0 ? M(0) : M(Tr::kNeg));
                  if (i == P - 1) {
#pragma unroll
                    for (int s = 0; s < 8; ++s) be[s] = sh.beta_at_k[c * 8 + s];
                  } else {
#pragma unroll
                    for (int s = 0; s < 8; ++s) be[s] = sh.bound(c, 1, s, i + 1);
                  }
                }
                __syncthreads();  // every old metric this round starts from has been read
                if (r0 > 0 && t == T - 1) {
#pragma unroll
                  for (int s = 0; s < 8; ++s) sh.bound(c, 0, s, r0) = held[s];
                }
                if (!active) continue;
                RegisterAlpha<M, kWindow> alpha;
                const int begin = static_cast<int>(e.x & 0xFFFFu);
                M* ckpt = scratch + (static_cast<std::size_t>(d.bit_offset) + begin) * 8;
                const SubBlock sb{K,
                                  d.f1,
                                  d.f2,
                                  c,
                                  begin,
                                  static_cast<int>(e.x >> 16),
                                  static_cast<int>(e.y & 0xFFFFu),
                                  static_cast<int>(e.y >> 16)};
                decode_windowed<Tr, kWindow, true>(io, sb, al, be, ckpt, alpha,
                                                   [&](const M(&a)[8]) {
                                                     if (i == P - 1) return;
#pragma unroll
                                                     for (int s = 0; s < 8; ++s) {
                                                       if (t == T - 1)
                                                         held[s] = a[s];
                                                       else
                                                         sh.bound(c, 0, s, i + 1) = a[s];
                                                     }
                                                   });
                if (i > 0) {
#pragma unroll
                  for (int s = 0; s < 8; ++s) sh.bound(c, 1, s, i) = be[s];
                }
              }
            });
}

}  // namespace sigpu::turbo::cuda
