// Strict mode for small batches of large P: each code block on one thread block cluster of Q
// thread blocks, every iteration in one launch.
//
// A code block decoded alone (the latency of one block) leaves most of the GPU idle. The
// cooperative kernel spreads it over several SMs but exchanges extrinsics and boundary metrics
// through L2 and meets at a grid barrier every half-iteration: ~4 us per half-iteration at
// P = 768, most of it barrier waits and L2 round trips (docs/turbo.md). A cluster keeps them in
// its SMs' shared memory, which every thread block of the cluster reaches (distributed shared
// memory), and its barrier is the hardware's.
//
// Thread block r of a block's cluster runs sub-decoders [r T, (r + 1) T) in one round (T =
// blockDim.x). It keeps the block's systematic LLRs and its own trellis range of both parity
// streams (read-only), its slice of the extrinsics (bits [r S, (r + 1) S), S the power of two
// at or above K / Q, so that an owner is a shift: component 1's positions are mostly its own,
// component 2's interleaved ones mostly another's), and the boundary metrics its sub-decoders
// start from. Those are double buffered by iteration parity, as on the CPU: a sub-decoder
// writes its neighbour's before the neighbour, in another thread block, may have read the old
// ones. The arithmetic is decode_windowed's, so the results are the other strict kernels' and
// the CPU's.
#pragma once

#include <cooperative_groups.h>

#include <cstddef>
#include <cstdint>

#include "turbo/cuda/block_kernel.cuh"

namespace sigpu::turbo::cuda {

/// Sub-decoders per thread block of a cluster; clusters of up to 8 (the portable size) cover
/// P <= 1024.
inline constexpr int kClusterThreads = 128;
inline constexpr int kMaxClusterBlocks = 8;

/// Shared memory of one thread block of the cluster kernel (words of the metric type): the
/// systematic and both parity arrays at padded positions of the whole block (only the thread
/// block's trellis range of the parities is filled), its extrinsic slice of S bits, beta at K
/// of both components, the boundary metrics [component][buffer][alpha, beta][state][T], and the
/// early termination CRC's per-warp words.
struct ClusterSmem {
  __host__ __device__ static constexpr std::size_t bytes(int K, int S, int T) {
    return 3 * BlockSmem::array_bytes(K) + BlockSmem::array_bytes(S) + BlockSmem::kTailBetaBytes +
           std::size_t(2 * 2 * 2 * 8) * static_cast<std::size_t>(T) * BlockSmem::kWord +
           BlockSmem::kCrcBytes;
  }
};

/// log2 of the extrinsic slice S of each of Q thread blocks over K bits.
__host__ __device__ constexpr int cluster_slice_shift(int K, int Q) {
  int shift = 0;
  while ((1 << shift) * Q < K) ++shift;
  return shift;
}

/// The inputs of ClusterKernel's sub-decoders: the systematic LLRs and this component's
/// parities in the thread block's shared memory, the extrinsic of bit n in the shared memory of
/// thread block n >> shift of the cluster.
template <class Tr>
struct ClusterIo : IoCommon<Tr> {
  using typename IoCommon<Tr>::Llr;
  using typename IoCommon<Tr>::M;
  const M* sys = nullptr;
  const M* par = nullptr;
  M* ext = nullptr;  ///< this thread block's slice (the same offset in every thread block)
  int shift = 0;
  __device__ __forceinline__ M& ext_at(int n) const {
    M* slice = cooperative_groups::this_cluster().map_shared_rank(ext, n >> shift);
    return slice[padded(n & ((1 << shift) - 1))];
  }
  __device__ __forceinline__ M a(int n) const { return sys[padded(n)] + ext_at(n); }
  __device__ __forceinline__ M lp(int k) const { return par[padded(k)]; }
  __device__ __forceinline__ void put(int n, Llr le) const { ext_at(n) = static_cast<M>(le); }
  static constexpr bool kPackedPositions = false;
  static constexpr bool kFoldsCrc = true;
};

/// Strict mode, every iteration of code block blockIdx.x / Q on the cluster of Q = the cluster's
/// size thread blocks (ClusterSmem::bytes(K, S, blockDim.x) of dynamic shared memory for the
/// batch's largest K and its S). scratch, bits, llr_out, stop: as StrictBlockKernel's. With
/// early termination every thread folds the CRC weights of its decisions as it makes them; each
/// thread block publishes its share in its shared memory and every thread block adds up all of
/// them: they reach the same answer and stop together.
template <class Tr>
__global__ void __launch_bounds__(kClusterThreads)
    StrictClusterKernel(const BlockDesc* __restrict__ blocks,
                        const typename Tr::Llr* __restrict__ llr, int iterations, float scale,
                        int scale_q4, typename Tr::Metric* scratch, std::uint8_t* bits,
                        float* llr_out, EarlyStop stop) {
  using M = typename Tr::Metric;
  static_assert(sizeof(M) == BlockSmem::kWord);
  extern __shared__ __align__(16) unsigned char smem[];
  static_assert(kClusterThreads / 32 * 4 + 4 <= BlockSmem::kCrcBytes);
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  const int Q = static_cast<int>(cluster.num_blocks()), r = static_cast<int>(cluster.block_rank());
  const BlockDesc d = blocks[blockIdx.x / Q];
  const int K = d.K, P = d.P, T = static_cast<int>(blockDim.x), t = static_cast<int>(threadIdx.x);
  const int shift = cluster_slice_shift(K, Q);
  const typename Tr::Llr* g_llr = llr + d.llr_offset;
  const std::size_t array_words = BlockSmem::array_bytes(K) / BlockSmem::kWord;
  auto* s_sys = reinterpret_cast<M*>(smem);
  M* s_par = s_sys + array_words;  // component c at c * array_words
  M* s_ext = s_sys + 3 * array_words;
  M* s_tail_beta = s_ext + BlockSmem::array_bytes(1 << shift) / BlockSmem::kWord;
  M* s_bound = s_tail_beta + 16;
  auto* part = reinterpret_cast<std::uint32_t*>(s_bound + 2 * 2 * 2 * 8 * blockDim.x);
  std::uint32_t* s_share = part + kClusterThreads / 32;  // this thread block's share of the CRC
  const std::uint32_t* crc_last = stop.weights ? stop.weights + (K - 1) : nullptr;
  auto bound = [&](M* base, int c, int buf, int is_beta, int s, int l) -> M& {
    return base[(((c * 2 + buf) * 2 + is_beta) * 8 + s) * T + l];
  };

  const int i = r * T + t;
  const bool active = i < P;
  const int k0 = sub_begin(K, P, min(r * T, P)), k1 = sub_begin(K, P, min((r + 1) * T, P));
  for (int n = t; n < K; n += T) s_sys[padded(n)] = static_cast<M>(g_llr[n]);
  for (int k = k0 + t; k < k1; k += T) {
    s_par[padded(k)] = static_cast<M>(g_llr[K + 4 + k]);
    s_par[array_words + padded(k)] = static_cast<M>(g_llr[2 * (K + 4) + k]);
  }
  for (int x = t; x < padded(1 << shift); x += T) s_ext[x] = M(0);
  for (int x = t; x < 2 * 2 * 2 * 8 * T; x += T) s_bound[x] = M(0);  // the first iteration's
  if (t < 2) {
    M be[8];
    tail_beta<Tr, Tr::kLogMap>(g_llr, K, t, be);
#pragma unroll
    for (int s = 0; s < 8; ++s) s_tail_beta[t * 8 + s] = be[s];
  }
  SubBlock sb[2];
  if (active) sb[1] = make_sub_block(K, d.f1, d.f2, 1, P, i);
  sb[0] = sb[1];
  sb[0].c = 0;
  cluster.sync();  // every thread block's arrays are ready before any other reads them

  // Neighbours' boundary slots: sub-decoder j's, in its thread block's shared memory.
  auto slot_of = [&](int j) { return cluster.map_shared_rank(s_bound, j / T); };
  int stopped_at = 0;
  for (int it = 0; it < iterations && !stopped_at; ++it) {
    const int rb = it & 1, wb = rb ^ 1;
    const bool check = stop.checks(it, iterations);
    std::uint32_t crc = 0;  // this thread's share of the decisions' CRC
    for (int c = 0; c < 2; ++c) {
      if (active) {
        ClusterIo<Tr> io;
        point_io(io, s_sys, s_par + c * array_words, s_ext, scale, scale_q4,
                 c == 1 && stop.decides(it, iterations), bits + d.bit_offset,
                 llr_out ? llr_out + d.bit_offset : nullptr);
        io.shift = shift;
        io.crc_last = crc_last;
        M al[8], be[8];
#pragma unroll
        for (int s = 0; s < 8; ++s) {
          al[s] = i > 0 ? bound(s_bound, c, rb, 0, s, t) : (s == 0 ? M(0) : M(Tr::kNeg));
          be[s] = i < P - 1 ? bound(s_bound, c, rb, 1, s, t) : s_tail_beta[c * 8 + s];
        }
        RegisterAlpha<M, kWindow> alpha;
        M* ckpt = scratch + (static_cast<std::size_t>(d.bit_offset) + sb[c].begin) * 8;
        decode_windowed<Tr, kWindow, true>(io, sb[c], al, be, ckpt, alpha, [&](const M(&a)[8]) {
          if (i == P - 1) return;
          M* next = slot_of(i + 1);
#pragma unroll
          for (int s = 0; s < 8; ++s) bound(next, c, wb, 0, s, (i + 1) % T) = a[s];
        });
        if (i > 0) {
          M* prev = slot_of(i - 1);
#pragma unroll
          for (int s = 0; s < 8; ++s) bound(prev, c, wb, 1, s, (i - 1) % T) = be[s];
        }
        crc = io.crc;
      }
      if (check && c == 1) {  // published before the barrier that ends the half-iteration
        const std::uint32_t share = block_xor(crc, part);
        if (t == 0) *s_share = share;
      }
      cluster.sync();  // the half-iteration's extrinsics and metrics are complete everywhere
    }
    if (check) {
      // The next check's share is written after the next half-iteration's barrier, which every
      // thread block reaches only once it has read this one.
      std::uint32_t all = 0;
#pragma unroll
      for (int q = 0; q < kMaxClusterBlocks; ++q)  // the loads in flight together
        if (q < Q) all ^= *cluster.map_shared_rank(s_share, q);
      if (all == 0) stopped_at = it + 1;
    }
  }
  if (stopped_at) cluster.sync();  // none leaves while another still reads its share
  if (stop.weights && r == 0 && t == 0) stop.done_at[blockIdx.x / Q] = stopped_at;
}

}  // namespace sigpu::turbo::cuda
