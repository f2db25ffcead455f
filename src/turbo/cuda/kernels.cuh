// Turbo decoder kernels. One thread per sub-decoder, its 8 state metrics in registers; the
// arithmetic is the CPU's (forward_step and backward_extrinsic with normalisation every
// kNormEvery steps, and Tr::extrinsic, of turbo/map_decoder.hpp), only the memory traffic is
// organised for the GPU:
//
// - The sub-block is walked in windows of W bits. For each window the thread first loads its W
//   inputs (A = Ls + La, and Lp) into registers - independent loads, all in flight together
//   instead of one dependent global round trip per trellis step; component 2 computes the QPP
//   interleaver instead of loading it, so its gathers wait for no other load - then runs
//   the forward recursion over the window storing alpha (SharedAlpha or RegisterAlpha), then
//   the backward recursion and the extrinsics reading alpha back. Where the inputs live is the
//   Io class's business (GlobalIo here, SharedIo in block_kernel.cuh).
// - A sub-block longer than W takes a first forward pass that keeps only one alpha checkpoint per
//   window (global memory, 1/W of the old traffic); the backward pass recomputes each window's
//   alpha from its checkpoint. Recomputing runs the same forward_step on the same inputs, so the
//   results are bit-identical to the CPU's stored alphas. A sub-block of at most W bits (K / P
//   <= 8, e.g. K = 6144, P = 768) needs no checkpoints and no first pass.
// - Each thread finds its code block through a per-sub-decoder table (one coalesced load)
//   instead of a binary search over the block descriptors.
// - Strict mode runs one thread block cluster per code block (cluster_kernel.cuh) for P > 384
//   up to a wave of clusters, one thread block per code block (block_kernel.cuh) where the
//   block's arrays fit in shared memory and P >= 32. Otherwise, small batches (all sub-decoders
//   resident at once) run it as one cooperative launch with a grid barrier per half-iteration
//   (StrictPersistentKernel), larger ones as one launch per half-iteration.
//
// Why one thread per sub-decoder rather than 8 (one per state): with 8 threads each trellis
// step needs an exchange of the 8 metrics (shuffles) and a 2-way max per thread, about as many
// instructions as one thread doing all 8 states, plus the shuffle latency on the serial chain.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>
#include <type_traits>

#include "turbo/map_decoder.hpp"

namespace sigpu::turbo::cuda {

inline constexpr int kThreadsPerBlock = 128;
inline constexpr int kWindow = 8;
// 5 blocks of 128 threads per SM caps the registers at 96 (a few bytes of spill); 6 would
// spill ~100 bytes per thread. Shared memory allows 6 (32 KB each).
inline constexpr int kMinBlocks = 5;

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

/// Early termination as the kernels see it (DecoderOptions::early_termination, min_iterations,
/// crc): after each full iteration from min_iterations on, except the last, a code block whose
/// hard decisions pass its CRC stops.
struct EarlyStop {
  const std::uint32_t* weights = nullptr;  ///< crc24_weights of the CRC; null: off
  int min_iterations = 1;
  std::int32_t* done_at = nullptr;  ///< per code block: the iteration it stopped after, or 0
  /// Whether iteration it (0-based) of `iterations` writes hard decisions.
  __host__ __device__ bool decides(int it, int iterations) const {
    return it == iterations - 1 || (weights && it + 1 >= min_iterations);
  }
  /// Whether the CRC is checked after iteration it.
  __host__ __device__ bool checks(int it, int iterations) const {
    return weights && it + 1 >= min_iterations && it + 1 < iterations;
  }
};

/// The XOR of every thread's r over the thread block, returned to every thread (every thread
/// calls it; blockDim.x a multiple of 32; part: blockDim.x / 32 words of shared memory).
__device__ __forceinline__ std::uint32_t block_xor(std::uint32_t r, std::uint32_t* part) {
  for (int off = 16; off > 0; off >>= 1) r ^= __shfl_xor_sync(0xFFFFFFFFu, r, off);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = r;
  __syncthreads();
  std::uint32_t all = 0;
  for (unsigned w = 0; w < blockDim.x / 32; ++w) all ^= part[w];
  __syncthreads();  // part is free again
  return all;
}

/// Whether the CRC of a code block's K hard decisions is zero: the XOR of the weights of its
/// one bits, computed by the whole thread block (as block_xor) and returned to every thread. The
/// bits may have been written during the launch by other SMs: they are read at L2.
__device__ __forceinline__ bool block_crc_passes(const std::uint8_t* bits, int K,
                                                 const std::uint32_t* __restrict__ weights,
                                                 std::uint32_t* part) {
  std::uint32_t r = 0;
  for (int k = threadIdx.x; k < K; k += blockDim.x)
    if (__ldcg(bits + k)) r ^= __ldg(weights + (K - 1 - k));
  return block_xor(r, part) == 0;
}

// Windows start at the positions where the metrics are normalised (map_decoder.hpp): after the
// last step of a window going forward, after its first going backward.
static_assert(kWindow == kNormEvery);
template <bool kLogMap, typename M>
__device__ __forceinline__ void step_forward_in_window(M (&al)[8], M A, M Lp, int j, int wl) {
  if (j == wl - 1)
    forward_step<kLogMap, true>(al, A, Lp);
  else
    forward_step<kLogMap, false>(al, A, Lp);
}

/// Where the alpha of the current window lives (W steps of 8 metrics). SharedAlpha:
/// sal[(j * 8 + s) * kThreadsPerBlock + threadIdx.x] (conflict-free), for the kernels that keep
/// many threads per SM with few registers each.
template <typename M>
struct SharedAlpha {
  M* base;  ///< sal + threadIdx.x
  __device__ __forceinline__ M& at(int j, int s) { return base[(j * 8 + s) * kThreadsPerBlock]; }
};
/// In registers (every index is a constant once the window loops are unrolled), for the block
/// kernel, whose threads have registers to spare.
template <typename M, int W>
struct RegisterAlpha {
  M a[W][8];
  __device__ __forceinline__ M& at(int j, int s) { return a[j][s]; }
};

/// What every sub-decoder needs besides its inputs: the extrinsic scaling and, on a half-
/// iteration that decides (deciding), where the block's hard decisions (bits) and a-posteriori
/// LLRs (llr_out, may be null) go, indexed by information bit of the block. An Io class with
/// kFoldsCrc (the cluster kernel's, which ends a block on its CRC as it goes) also folds each
/// one decision's CRC weight into crc, so that no pass reads the decisions back; the window
/// loads the weights (crc_weight) with its inputs, so that they arrive together. The Io classes
/// add the inputs: a(n) = Ls + La of information bit n, lp(k) = Lp of trellis step k, and
/// put(n, Le).
template <class Tr>
struct IoCommon {
  using Llr = typename Tr::Llr;
  using M = typename Tr::Metric;
  static constexpr bool kFoldsCrc = false;
  float scale = 1.0f;
  int scale_q4 = 16;
  bool deciding = false;
  std::uint8_t* bits = nullptr;
  float* llr_out = nullptr;
  /// &weights[K - 1] of the block's CRC (crc24_weights): bit n's weight is crc_last[-n].
  const std::uint32_t* crc_last = nullptr;
  mutable std::uint32_t crc = 0;  ///< XOR of the weights of this thread's one decisions
  /// The CRC weight of bit n where this half-iteration folds them, else 0.
  __device__ __forceinline__ std::uint32_t crc_weight(int n) const {
    return deciding && crc_last ? __ldg(crc_last - n) : 0u;
  }
  __device__ __forceinline__ void decide(int n, M app) const {
    write_decision(bits, llr_out, static_cast<std::uint32_t>(n), app);
  }
  /// decide, folding weight (crc_weight(n)) into crc for a one.
  __device__ __forceinline__ void decide(int n, M app, std::uint32_t weight) const {
    decide(n, app);
    if (app < M(0)) crc ^= weight;
  }
};

/// The inputs in the batch's arrays in device memory (Load: how ext_in is read).
template <class Tr, class Load>
struct GlobalIo : IoCommon<Tr> {
  using typename IoCommon<Tr>::Llr;
  using typename IoCommon<Tr>::M;
  const Llr* sys = nullptr;
  const Llr* par = nullptr;  ///< this component's parity stream
  const Llr* ext_in = nullptr;
  Llr* ext_out = nullptr;
  __device__ __forceinline__ M a(int n) const {
    return static_cast<M>(__ldg(sys + n)) + static_cast<M>(Load::ld(ext_in + n));
  }
  __device__ __forceinline__ M lp(int k) const { return static_cast<M>(__ldg(par + k)); }
  __device__ __forceinline__ void put(int n, Llr le) const { ext_out[n] = le; }
  static constexpr bool kPackedPositions = true;
};

/// The sub-block and the component a sub-decoder runs.
struct SubBlock {
  int K, f1, f2;   ///< code block size and QPP coefficients
  int c;           ///< component (1 steps through the interleaver)
  int begin, end;  ///< trellis steps [begin, end)
  /// Component 2: pi(begin) and the increment pi(begin + 1) - pi(begin) mod K; the block kernel
  /// takes them from a table filled once per launch instead of three mod-K reductions per
  /// half-iteration.
  int pi0 = 0, g0 = 0;
};

/// The QPP interleaver's increment g(k) = pi(k + 1) - pi(k) mod K = (f1 + f2 (2k + 1)) mod K.
__host__ __device__ __forceinline__ int qpp_step(int K, int f1, int f2, int k) {
  return (f1 + f2 * (2 * k + 1)) % K;
}

/// The information bit of a component's next trellis step: component 1 (c = 0) steps in order,
/// component 2 through the QPP interleaver, computed incrementally: pi(k + 1) = pi(k) + g(k),
/// g(k + 1) = g(k) + 2 f2, mod K (two_f2 = 2 f2 mod K).
__device__ __forceinline__ void next_position(int c, int K, int two_f2, int& p, int& g) {
  if (c == 1) {
    p += g;
    p = p >= K ? p - K : p;
    g += two_f2;
    g = g >= K ? g - K : g;
  } else {
    ++p;
  }
}

/// SubBlock of sub-decoder i of P over K bits, component c.
__device__ __forceinline__ SubBlock make_sub_block(int K, int f1, int f2, int c, int P, int i) {
  const int begin = sub_begin(K, P, i);
  return SubBlock{K,
                  f1,
                  f2,
                  c,
                  begin,
                  sub_begin(K, P, i + 1),
                  qpp_at(K, f1, f2, begin),
                  qpp_step(K, f1, f2, begin)};
}

/// The bit positions of a window: two per register (they are < 2^16) where registers are scarce
/// (the kernels with many threads per SM), one per register in the block kernel, which saves
/// the unpacking on every bit.
template <int W, bool kPacked>
struct WindowPositions {
  std::uint32_t v[W / 2];
  __device__ __forceinline__ void set(int j, int p) {
    if (j % 2 == 0)
      v[j / 2] = static_cast<std::uint32_t>(p);
    else
      v[j / 2] |= static_cast<std::uint32_t>(p) << 16;
  }
  __device__ __forceinline__ int operator[](int j) const {
    return static_cast<int>((v[j / 2] >> (16 * (j % 2))) & 0xFFFFu);
  }
};
template <int W>
struct WindowPositions<W, false> {
  int v[W];
  __device__ __forceinline__ void set(int j, int p) { v[j] = p; }
  __device__ __forceinline__ int operator[](int j) const { return v[j]; }
};

/// A whole window of W steps from alpha at its start (a) and beta at its end (be), as two
/// independent chains: the first half steps forward while the second half steps backward
/// (keeping each beta in the row where alpha would go), then each chain crosses the middle and
/// emits the extrinsics of the other half from what the other one kept. The forward-then-
/// backward order has one serial chain of 2W steps; this one two chains of W, which the SM's
/// schedulers interleave. Every alpha, beta and sum is computed as there, so the results are
/// the same. On return a holds alpha at the window's end, be beta at its start.
template <int W, bool kLogMap, typename M, class Alpha, class Emit>
__device__ __forceinline__ void decode_window_two_chains(M (&a)[8], M (&be)[8], const M (&A)[W],
                                                         const M (&Lp)[W], Alpha& rows,
                                                         const Emit& emit) {
  constexpr int H = W / 2;
  static_assert(W % 2 == 0 && H > 0);
#pragma unroll
  for (int q = 0; q < H; ++q) {
    const int jf = q, jb = W - 1 - q;  // jb >= H > 0: the backward steps here never normalise
#pragma unroll
    for (int s = 0; s < 8; ++s) rows.at(jf, s) = a[s];  // alpha_jf
    step_forward_in_window<kLogMap>(a, A[jf], Lp[jf], jf, W);
#pragma unroll
    for (int s = 0; s < 8; ++s) rows.at(jb, s) = be[s];  // beta_{jb + 1}
    backward_step<kLogMap, false>(be, A[jb], Lp[jb]);
  }
#pragma unroll
  for (int q = 0; q < H; ++q) {
    const int jf = H + q, jb = H - 1 - q;
    M next[8];
#pragma unroll
    for (int s = 0; s < 8; ++s) next[s] = rows.at(jf, s);
    const M le_f = step_extrinsic<kLogMap>(
        next, [&](int s) { return a[s]; }, Lp[jf]);
    step_forward_in_window<kLogMap>(a, A[jf], Lp[jf], jf, W);
    auto row = [&](int s) { return rows.at(jb, s); };
    const M le_b = jb == 0  // normalise after the window's first bit, as the serial order does
                       ? backward_extrinsic<kLogMap, true>(be, row, A[jb], Lp[jb])
                       : backward_extrinsic<kLogMap, false>(be, row, A[jb], Lp[jb]);
    emit(jf, le_f);
    emit(jb, le_b);
  }
}

/// One sub-decoder for one half-iteration, windowed (see the top of this file). al holds alpha
/// at the sub-block's start on entry, be beta at its end; on return be holds beta at the start.
/// alpha_end(a) receives alpha at the end as soon as it is known. ckpt: room for 8 metrics per
/// window (used when the sub-block is longer than W). kTwoChains: whole windows run as two
/// chains (decode_window_two_chains), for kernels with the registers for it; with 96 registers
/// (the many-thread kernels) the second chain spills.
template <class Tr, int W, bool kTwoChains, class Io, class Alpha, class AlphaEnd>
__device__ __forceinline__ void decode_windowed(const Io& io, const SubBlock& sb,
                                                typename Tr::Metric (&al)[8],
                                                typename Tr::Metric (&be)[8],
                                                typename Tr::Metric* ckpt, Alpha& alpha,
                                                const AlphaEnd& alpha_end) {
  using M = typename Tr::Metric;
  const int K = sb.K, c = sb.c, begin = sb.begin, end = sb.end;
  const int len = end - begin;

  // The window's information bits (pos, next_position) and their inputs. Every load of a window
  // is independent of the others.
  M A[W], Lp[W];
  std::uint32_t weight[Io::kFoldsCrc ? W : 1];
  WindowPositions<W, Io::kPackedPositions> pos;
  const int two_f2 = (2 * sb.f2) % K;
  // p, g: position and increment at the window's first step k0 (the sub-block's own at its
  // start; divisions only for later windows, which the checkpoint pass reaches by stepping on).
  auto window_start = [&](int k0, int& p, int& g) {
    if (c == 0) {
      p = k0;
      g = 1;
    } else if (k0 == begin) {
      p = sb.pi0;
      g = sb.g0;
    } else {
      p = qpp_at(K, sb.f1, sb.f2, k0);
      g = qpp_step(K, sb.f1, sb.f2, k0);
    }
  };
  // Loads the window at k0 (wl steps) and leaves p, g at k0 + W.
  auto load_window = [&](int k0, int wl, int& p, int& g) {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if (j < wl) {
        A[j] = io.a(p);
        Lp[j] = io.lp(k0 + j);
        if constexpr (Io::kFoldsCrc) weight[j] = io.crc_weight(p);
      }
      pos.set(j, p);
      next_position(c, K, two_f2, p, g);
    }
  };

  const int nwin = (len + W - 1) / W;
  if (nwin > 1) {  // checkpoint pass
    int p, g;
    window_start(begin, p, g);
    for (int w = 0; w < nwin; ++w) {
      const int k0 = begin + w * W, wl = min(W, end - k0);
#pragma unroll
      for (int s = 0; s < 8; ++s) ckpt[w * 8 + s] = al[s];
      load_window(k0, wl, p, g);
#pragma unroll
      for (int j = 0; j < W; ++j)
        if (j < wl) step_forward_in_window<Tr::kLogMap>(al, A[j], Lp[j], j, wl);
    }
    alpha_end(al);
  }

  // The extrinsic and decision of window step j.
  auto emit = [&](int j, M le) {
    const int n = pos[j];
    io.put(n, Tr::extrinsic(le, io.scale, io.scale_q4));
    if (io.deciding) {
      if constexpr (Io::kFoldsCrc)
        io.decide(n, A[j] + le, weight[j]);
      else
        io.decide(n, A[j] + le);
    }
  };
  // One window; two_chains (std::true_type): a whole one (wl == W) by
  // decode_window_two_chains, else forward then backward over wl <= W steps.
  auto window = [&](int w, auto two_chains) {
    constexpr bool kWhole = decltype(two_chains)::value;
    const int k0 = begin + w * W, wl = kWhole ? W : min(W, end - k0);
    int p, g;
    window_start(k0, p, g);
    load_window(k0, wl, p, g);
    M a[8];
#pragma unroll
    for (int s = 0; s < 8; ++s) a[s] = nwin > 1 ? ckpt[w * 8 + s] : al[s];
    if constexpr (kWhole) {
      decode_window_two_chains<W, Tr::kLogMap>(a, be, A, Lp, alpha, emit);
      if (nwin == 1) alpha_end(a);
    } else {
#pragma unroll
      for (int j = 0; j < W; ++j) {
        if (j < wl) {
#pragma unroll
          for (int s = 0; s < 8; ++s) alpha.at(j, s) = a[s];
          step_forward_in_window<Tr::kLogMap>(a, A[j], Lp[j], j, wl);
        }
      }
      if (nwin == 1) alpha_end(a);
#pragma unroll
      for (int j = W - 1; j >= 0; --j) {
        if (j < wl) {
          auto row = [&](int s) { return alpha.at(j, s); };
          emit(j, j == 0  // constant once unrolled: normalise after the window's first bit
                      ? backward_extrinsic<Tr::kLogMap, true>(be, row, A[j], Lp[j])
                      : backward_extrinsic<Tr::kLogMap, false>(be, row, A[j], Lp[j]));
        }
      }
    }
  };
  for (int w = nwin - 1; w >= 0; --w) {
    if (kTwoChains && begin + (w + 1) * W <= end)
      window(w, std::true_type{});
    else
      window(w, std::false_type{});
  }
}

/// Sub-decoder i of block d for one half-iteration, everything in the batch's arrays in device
/// memory: boundary metrics from h's read buffer, to its write buffer. sal: this thread block's
/// shared alpha window (SharedAlpha).
template <class Tr, class Load, bool kTwoChains>
__device__ __forceinline__ void decode_global(const HalfIteration<Tr>& h, const BlockDesc& d, int i,
                                              typename Tr::Metric* ckpt, typename Tr::Metric* sal) {
  using M = typename Tr::Metric;
  const int K = d.K, P = d.P, c = h.component;
  GlobalIo<Tr, Load> io;
  io.sys = h.llr + d.llr_offset;
  io.par = io.sys + static_cast<std::size_t>(K + 4) * (1 + c);
  io.ext_in = h.ext_in + d.bit_offset;
  io.ext_out = h.ext_out + d.bit_offset;
  io.scale = h.scale;
  io.scale_q4 = h.scale_q4;
  io.deciding = h.bits != nullptr;
  io.bits = h.bits ? h.bits + d.bit_offset : nullptr;
  io.llr_out = h.llr_out ? h.llr_out + d.bit_offset : nullptr;

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
    tail_beta<Tr, Tr::kLogMap>(io.sys, K, c, be);
  } else {
    const M* src =
        bound_slot<Tr>(h.beta_bounds, h.total_bounds, c, h.read_buf, d.bound_offset + i + 1);
#pragma unroll
    for (int s = 0; s < 8; ++s) be[s] = Load::ld(src + s);
  }
  SharedAlpha<M> alpha{sal + threadIdx.x};
  const SubBlock sb = make_sub_block(K, d.f1, d.f2, c, P, i);
  decode_windowed<Tr, kWindow, kTwoChains>(io, sb, al, be, ckpt, alpha, [&](const M(&a)[8]) {
    if (i == P - 1) return;
    M* dst = bound_slot<Tr>(h.alpha_bounds, h.total_bounds, c, h.write_buf, d.bound_offset + i + 1);
#pragma unroll
    for (int s = 0; s < 8; ++s) dst[s] = a[s];
  });
  if (i > 0) {
    M* dst = bound_slot<Tr>(h.beta_bounds, h.total_bounds, c, h.write_buf, d.bound_offset + i);
#pragma unroll
    for (int s = 0; s < 8; ++s) dst[s] = be[s];
  }
}

/// Strict mode: one half-iteration of every sub-decoder of the batch. sub_block[t]: the code
/// block of global sub-decoder t. scratch: 8 metrics per bit (checkpoints use 1 / kWindow).
/// done_at (early termination, else null): sub-decoders of blocks that passed their CRC stop.
template <class Tr>
__global__ void __launch_bounds__(kThreadsPerBlock, kMinBlocks)
    HalfIterationKernel(HalfIteration<Tr> h, const std::uint32_t* __restrict__ sub_block,
                        std::uint32_t total_subs, typename Tr::Metric* scratch,
                        const std::int32_t* __restrict__ done_at) {
  using M = typename Tr::Metric;
  __shared__ M sal[kWindow * 8 * kThreadsPerBlock];
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= total_subs) return;
  const std::uint32_t block = __ldg(sub_block + t);
  if (done_at && done_at[block]) return;
  const BlockDesc d = h.blocks[block];
  const int i = static_cast<int>(t - d.sub_offset);
  M* ckpt = scratch + (static_cast<std::size_t>(d.bit_offset) + sub_begin(d.K, d.P, i)) * 8;
  decode_global<Tr, ReadOnlyLoad, false>(h, d, i, ckpt, sal);
}

/// Strict mode in one launch, for batches whose sub-decoders are all resident at once (the
/// latency of a few blocks): a barrier over all thread blocks between half-iterations stands in
/// for the kernel boundary, and the kernel zeroes its working arrays itself instead of three
/// memsets. Each half-iteration reads and writes what HalfIterationKernel does: the same
/// results. The arrays written during the launch are read with L2-coherent loads.
template <class Tr>
__global__ void __launch_bounds__(kThreadsPerBlock)
    StrictPersistentKernel(HalfIteration<Tr> h, typename Tr::Llr* ext1, typename Tr::Llr* ext2,
                           std::uint32_t ext_words, std::uint32_t bound_words,
                           const std::uint32_t* __restrict__ sub_block, std::uint32_t total_subs,
                           typename Tr::Metric* scratch, int iterations, std::uint8_t* bits,
                           float* llr_out, EarlyStop stop, int nblocks) {
  using M = typename Tr::Metric;
  __shared__ M sal[kWindow * 8 * kThreadsPerBlock];
  __shared__ std::uint32_t part[kThreadsPerBlock / 32];
  cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t stride = gridDim.x * blockDim.x;
  auto* w1 = reinterpret_cast<std::uint32_t*>(ext1);
  auto* w2 = reinterpret_cast<std::uint32_t*>(ext2);
  auto* wb = reinterpret_cast<std::uint32_t*>(h.alpha_bounds);  // alpha, then beta
  for (std::uint32_t x = t; x < ext_words; x += stride) w1[x] = w2[x] = 0;
  for (std::uint32_t x = t; x < bound_words; x += stride) wb[x] = 0;
  if (stop.weights)
    for (std::uint32_t x = t; x < static_cast<std::uint32_t>(nblocks); x += stride)
      stop.done_at[x] = 0;
  grid.sync();
  const bool active = t < total_subs;
  BlockDesc d;
  std::uint32_t block = 0;
  int i = 0;
  M* ckpt = nullptr;
  if (active) {
    block = __ldg(sub_block + t);
    d = h.blocks[block];
    i = static_cast<int>(t - d.sub_offset);
    ckpt = scratch + (static_cast<std::size_t>(d.bit_offset) + sub_begin(d.K, d.P, i)) * 8;
  }
  const volatile std::int32_t* done = stop.done_at;
  for (int it = 0; it < iterations; ++it) {
    for (int c = 0; c < 2; ++c) {
      h.select(it, c, ext1, ext2);
      const bool decide = c == 1 && stop.decides(it, iterations);
      h.bits = decide ? bits : nullptr;
      h.llr_out = decide ? llr_out : nullptr;
      if (active && !(stop.weights && done[block]))
        decode_global<Tr, CoherentLoad, true>(h, d, i, ckpt, sal);
      grid.sync();
    }
    if (stop.checks(it, iterations)) {
      // Thread block x checks code blocks x, x + gridDim.x, ...; its threads agree on done[b]
      // (only this thread block writes it, after they all read it).
      for (int b = blockIdx.x; b < nblocks; b += gridDim.x) {
        if (done[b]) continue;
        const BlockDesc db = h.blocks[b];
        if (block_crc_passes(bits + db.bit_offset, db.K, stop.weights, part) && threadIdx.x == 0)
          stop.done_at[b] = it + 1;
      }
      grid.sync();
    }
  }
}

/// Loose mode: every iteration in one launch. A sub-decoder never waits for another; it reads
/// the extrinsics and boundary metrics its neighbours have published so far (L2-coherent loads,
/// fenced stores), in whatever iteration they are.
template <class Tr>
__global__ void __launch_bounds__(kThreadsPerBlock, kMinBlocks)
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
      const bool decide = it == iterations - 1 && c == 1;
      hc.bits = decide ? bits : nullptr;
      hc.llr_out = decide ? h.llr_out : nullptr;
      decode_global<Tr, CoherentLoad, false>(hc, d, i, ckpt, sal);
      __threadfence();
    }
  }
}

inline constexpr int kCrcThreads = 256;

/// Early termination after iteration `iteration` of the per-half-iteration launches: one thread
/// block per code block; a zero CRC marks the block done.
__global__ void __launch_bounds__(kCrcThreads)
    CrcCheckKernel(const BlockDesc* __restrict__ blocks, const std::uint8_t* __restrict__ bits,
                   const std::uint32_t* __restrict__ weights, std::int32_t* done_at,
                   int iteration) {
  __shared__ std::uint32_t part[kCrcThreads / 32];
  const BlockDesc d = blocks[blockIdx.x];
  if (done_at[blockIdx.x]) return;  // the whole thread block leaves together
  if (block_crc_passes(bits + d.bit_offset, d.K, weights, part) && threadIdx.x == 0)
    done_at[blockIdx.x] = iteration;
}

}  // namespace sigpu::turbo::cuda
