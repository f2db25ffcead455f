// The inter-frame decoder's algorithm, written once over a vector-ops struct L that each
// instruction set supplies (interframe_avx2.cpp, interframe_avx512.cpp):
//
//   using Llr, Lane, V;              the LLR type, the metric lane type, the vector of lanes
//   kLanes, kNeg, kMax               lanes per vector, an unreachable state's metric, the
//                                    extrinsics' bound
//   kNormalise                       trellis steps between normalisations (divides kWindow)
//   zero, set1, add, sub, max        lane-wise (add and sub saturate in 8-bit lanes)
//   load, store                      kLanes metrics at a pointer
//   widen, narrow                    kLanes LLRs at a pointer, to and from metrics
//   bound(x)                         an LLR within what the metrics' headroom takes (8-bit
//                                    lanes: +-kIn) or x itself
//   extrinsic(le, q)                 FixedTraits::extrinsic lane-wise: (le q) >> 4, within kMax
//
// Each group holds up to kLanes code blocks of the same K; their LLRs are laid out
// lane-interleaved (position n of every block in one vector). Each half-iteration runs the forward
// recursion over the whole block, keeping alpha at the start of every window, then the backward
// recursion with the extrinsics window by window, each window's alpha computed again from its
// checkpoint: the scalar sub-decoder's work for P = 1 (map_decoder.hpp has the trellis), with the
// block's alpha never leaving L1.
//
// In 16- and 32-bit lanes the arithmetic is exact, so where the scalar decoder normalises its
// metrics does not change a result: the extrinsics and decisions are differences in which any
// offset common to the 8 states cancels. 16-bit lanes hold int8 LLRs' metrics without overflow: a
// step changes a metric by at most |A| + |Lp| <= 383, the 8 states stay within three steps' worth
// of each other, and the metrics are renormalised every 8 steps. In 8-bit lanes every sum
// saturates, the channel and a-priori LLRs are bounded and the metrics are normalised after every
// step (tail steps included): the arithmetic of saturating_decoder.hpp, whose twin must give the
// same bits, step for step. Either way the metrics are normalised to their maximum.
//
// Included only between a target push and pop (#pragma GCC target / clang attribute), after the
// headers below, so that this algorithm and not the standard library's inline functions is built
// for the wider instruction set. Its functions have internal linkage so that each including file
// keeps its own copy, built for its own instruction set. Lambdas here call no vector code: clang
// 14 does not give them the region's target.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/interframe_transpose.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {
namespace {

// The trellis (map_decoder.hpp): from state s = r0 r1 r2 with input u, feedback a = u ^ r1 ^ r2,
// parity p = a ^ r0 ^ r2, next state a r0 r1.
constexpr int feedback(int s, int u) {
  return u ^ ((s >> 1) & 1) ^ (s & 1);
}
constexpr int parity(int s, int u) {
  return feedback(s, u) ^ (s >> 2) ^ (s & 1);
}
constexpr int next_state(int s, int u) {
  return feedback(s, u) << 2 | (s >> 2) << 1 | ((s >> 1) & 1);
}

template <class L>
using Vec = typename L::V;

/// Branch metric -(u A + p Lp) of (u, p), from the step's -A, -Lp and -(A + Lp).
template <class L>
struct Branch {
  Vec<L> none, a, lp, both;
  Vec<L> of(int u, int p) const { return u ? (p ? both : a) : (p ? lp : none); }
};
template <class L>
[[gnu::always_inline]] inline Branch<L> branch(Vec<L> A, Vec<L> Lp) {
  const Vec<L> z = L::zero();
  const Vec<L> na = L::sub(z, A);
  return {z, na, L::sub(z, Lp), L::sub(na, Lp)};
}

template <class L>
[[gnu::always_inline]] inline void normalise(Vec<L> (&m)[8]) {
  const Vec<L> top = L::max(L::max(L::max(m[0], m[1]), L::max(m[2], m[3])),
                            L::max(L::max(m[4], m[5]), L::max(m[6], m[7])));
  for (int s = 0; s < 8; ++s) m[s] = L::sub(m[s], top);
}

/// alpha_{k+1} from alpha_k: next state n = a r0 r1 has the predecessors r0 r1 r2, so states
/// r0 r1 0 and r0 r1 1 feed exactly the pair 0 r0 r1 and 1 r0 r1. Taken pair by pair, each
/// alpha is dead once its pair is done, and the 8 new metrics fit in the registers it frees.
template <class L>
[[gnu::always_inline]] inline void forward(Vec<L> (&al)[8], const Branch<L>& g) {
  Vec<L> na[8];
  for (int j = 0; j < 4; ++j)
    for (int a = 0; a < 2; ++a) {
      const int n = a << 2 | j, r0 = j >> 1, r1 = j & 1;
      Vec<L> v[2];
      for (int r2 = 0; r2 < 2; ++r2) {
        const int s = r0 << 2 | r1 << 1 | r2, u = a ^ r1 ^ r2, p = a ^ r0 ^ r2;
        v[r2] = (u | p) ? L::add(al[s], g.of(u, p)) : al[s];
      }
      na[n] = L::max(v[0], v[1]);
    }
  for (int n = 0; n < 8; ++n) al[n] = na[n];
}

/// One backward step: be holds beta_{k+1} on entry and beta_k(s) = max(t(s, 0), t(s, 1) - A) on
/// return, t(s, u) = beta_{k+1}(next(s, u)) - p(s, u) Lp. With alpha (alpha_k's 8 vectors) it
/// returns the extrinsic l(0) - l(1), l(u) = max_s alpha_k(s) + t(s, u).
template <class L, bool kExtrinsic>
[[gnu::always_inline]] inline Vec<L> backward(Vec<L> (&be)[8], const typename L::Lane* alpha,
                                              Vec<L> A, Vec<L> Lp) {
  Vec<L> nb[8], l0 = L::zero(), l1 = l0;
  for (int s = 0; s < 8; ++s) {
    const Vec<L> b0 = be[next_state(s, 0)], b1 = be[next_state(s, 1)];
    const Vec<L> t0 = parity(s, 0) ? L::sub(b0, Lp) : b0;
    const Vec<L> t1 = parity(s, 1) ? L::sub(b1, Lp) : b1;
    if constexpr (kExtrinsic) {
      const Vec<L> a = L::load(alpha + s * L::kLanes);
      l0 = s ? L::max(l0, L::add(a, t0)) : L::add(a, t0);
      l1 = s ? L::max(l1, L::add(a, t1)) : L::add(a, t1);
    }
    nb[s] = L::max(t0, L::sub(t1, A));
  }
  for (int s = 0; s < 8; ++s) be[s] = nb[s];
  return L::sub(l0, l1);
}

/// Steps per window of the backward pass (a multiple of every kNormalise).
constexpr int kWindow = 32;

/// The lane-interleaved working arrays of one group (kLanes values per position).
template <class L>
struct Group {
  // The inputs and extrinsics in their own width: the interleaved component gathers them, and
  // narrow ones keep more of them in cache.
  std::vector<typename L::Llr> d[3];  ///< d0 | d1 | d2, K + 4 positions each
  std::vector<typename L::Llr> ext[2];
  std::vector<typename L::Lane> ckpt;   ///< alpha (8 states) at the start of every window
  std::vector<typename L::Lane> alpha;  ///< alpha of the window being decoded, 8 per step
  std::vector<typename L::Lane> a;      ///< Ls + La of the window's steps
  std::vector<typename L::Lane> app;    ///< a-posteriori LLRs by information bit
};

/// Ls + La of every lane at information bit n.
template <class L>
[[gnu::always_inline]] inline Vec<L> a_priori(const typename L::Llr* d0,
                                              const typename L::Llr* ext_in, int n) {
  const std::size_t at = static_cast<std::size_t>(n) * L::kLanes;
  return L::bound(L::add(L::widen(d0 + at), L::widen(ext_in + at)));
}

/// The kLanes channel LLRs at p, bounded.
template <class L>
[[gnu::always_inline]] inline Vec<L> channel(const typename L::Llr* p) {
  return L::bound(L::widen(p));
}

/// One component decoder's half-iteration over a group: component c reads the systematic LLRs
/// in its order (the interleaver pi for c = 1), its parity, and the other component's
/// extrinsics, and writes its own (and the a-posteriori LLRs where kDecide). The arrays are
/// taken as local pointers: the int8 stores could alias anything reached through g, which would
/// make the compiler load every pointer again after each of them.
template <class L, bool kDecide>
void half_iteration(Group<L>& g, int K, int c, const std::uint16_t* pi, int q) {
  using Llr = typename L::Llr;
  using Lane = typename L::Lane;
  constexpr std::size_t W = L::kLanes;
  const Llr* const d0 = g.d[0].data();
  const Llr* const par = g.d[1 + c].data();
  const Llr* const ext_in = g.ext[1 - c].data();
  Llr* const ext_out = g.ext[c].data();
  Lane* const ckpt = g.ckpt.data();
  Lane* const alpha = g.alpha.data();
  Lane* const abuf = g.a.data();
  Lane* const app = g.app.data();
  const auto bit = [c, pi](int k) { return c == 0 ? k : static_cast<int>(pi[k]); };

  // Forward over the block keeping alpha only at the windows' starts.
  Vec<L> al[8], be[8];
  for (int s = 0; s < 8; ++s) al[s] = L::set1(s == 0 ? 0 : L::kNeg);
  for (int k = 0; k < K; ++k) {
    if (k % kWindow == 0)
      for (int s = 0; s < 8; ++s) L::store(ckpt + (std::size_t(k / kWindow) * 8 + s) * W, al[s]);
    forward<L>(al, branch<L>(a_priori<L>(d0, ext_in, bit(k)), channel<L>(par + k * W)));
    if ((k + 1) % L::kNormalise == 0) normalise<L>(al);
  }
  // beta at K from the three tail steps of component c (tail_beta_from's order).
  for (int s = 0; s < 8; ++s) be[s] = L::set1(s == 0 ? 0 : L::kNeg);
  for (int j = 2; j >= 0; --j) {
    const int mx = 2 * j, mz = 2 * j + 1;
    backward<L, false>(be, nullptr, channel<L>(g.d[mx % 3].data() + (K + 2 * c + mx / 3) * W),
                       channel<L>(g.d[mz % 3].data() + (K + 2 * c + mz / 3) * W));
    normalise<L>(be);
  }
  // Backward window by window from the last: each window's alpha again from its checkpoint
  // (the same steps, so the same values) into a buffer that stays in L1.
  for (int k0 = (K - 1) / kWindow * kWindow; k0 >= 0; k0 -= kWindow) {
    const int k1 = std::min(K, k0 + kWindow);
    for (int s = 0; s < 8; ++s) al[s] = L::load(ckpt + (std::size_t(k0 / kWindow) * 8 + s) * W);
    for (int k = k0; k < k1; ++k) {
      const Vec<L> A = a_priori<L>(d0, ext_in, bit(k));
      L::store(abuf + (k - k0) * W, A);
      for (int s = 0; s < 8; ++s) L::store(alpha + (std::size_t(k - k0) * 8 + s) * W, al[s]);
      forward<L>(al, branch<L>(A, channel<L>(par + k * W)));
      if ((k + 1) % L::kNormalise == 0) normalise<L>(al);
    }
    for (int k = k1 - 1; k >= k0; --k) {
      const Vec<L> A = L::load(abuf + (k - k0) * W);
      const Vec<L> le =
          backward<L, true>(be, alpha + std::size_t(k - k0) * 8 * W, A, channel<L>(par + k * W));
      if (k % L::kNormalise == 0) normalise<L>(be);
      const std::size_t n = static_cast<std::size_t>(bit(k)) * W;
      L::narrow(ext_out + n, L::extrinsic(le, q));
      if constexpr (kDecide) L::store(app + n, L::add(A, le));
    }
  }
}

/// Decodes the blocks `members` (one K, at most L::kLanes) of plan, their LLRs lane by lane, as
/// decode_cpu does.
template <class L>
void decode_group(const BatchPlan& plan, const typename L::Llr* llr, std::span<const int> members,
                  const DecoderOptions& o, DecodeResult& r) {
  using Lane = typename L::Lane;
  constexpr int W = L::kLanes;
  const int n_lanes = static_cast<int>(members.size());
  const BlockDesc& first = plan.blocks[members.front()];
  const int K = first.K;
  thread_local Group<L> g;
  for (auto& d : g.d) d.assign(static_cast<std::size_t>(K + 4) * W, 0);
  for (auto& e : g.ext) e.assign(static_cast<std::size_t>(K) * W, 0);
  g.ckpt.resize(static_cast<std::size_t>((K + kWindow - 1) / kWindow) * 8 * W);
  g.alpha.resize(static_cast<std::size_t>(kWindow) * 8 * W);
  g.a.resize(static_cast<std::size_t>(kWindow) * W);
  g.app.resize(static_cast<std::size_t>(K) * W);
  for (int s = 0; s < 3; ++s) {
    const typename L::Llr* src[W];
    for (int i = 0; i < n_lanes; ++i)
      src[i] = llr + plan.blocks[members[i]].llr_offset + s * (K + 4);
    typename L::Llr* dst = g.d[s].data();
    if constexpr (std::is_same_v<typename L::Llr, std::int8_t> && W % 16 == 0) {
      interleave_bytes(src, n_lanes, K + 4, dst, W);
    } else {
      for (int i = 0; i < n_lanes; ++i)
        for (int n = 0; n < K + 4; ++n) dst[static_cast<std::size_t>(n) * W + i] = src[i][n];
    }
  }
  const std::uint16_t* pi = plan.pi.data() + first.perm_offset;
  const int q = scale_q4(o.scaling);
  std::vector<int> done_at(n_lanes, 0);

  for (int it = 0; it < o.iterations; ++it) {
    const bool last = it == o.iterations - 1;
    for (int c = 0; c < 2; ++c) {
      const bool decide = c == 1 && (last || (o.early_termination && it + 1 >= o.min_iterations));
      if (!decide) {
        half_iteration<L, false>(g, K, c, pi, q);
        continue;
      }
      half_iteration<L, true>(g, K, c, pi, q);
      // Each lane's decisions (and LLRs) into its block, unless it stopped earlier.
      if constexpr (std::is_same_v<Lane, std::int8_t> && W % 16 == 0) {
        if (!o.output_llrs) {
          std::uint8_t* bits[W];
          for (int i = 0; i < n_lanes; ++i)
            bits[i] = done_at[i] ? nullptr : r.bits.data() + plan.blocks[members[i]].bit_offset;
          sign_bits(g.app.data(), W, n_lanes, K, bits);
          continue;
        }
      }
      for (int i = 0; i < n_lanes; ++i) {
        if (done_at[i]) continue;
        const std::size_t at = plan.blocks[members[i]].bit_offset;
        const Lane* app = g.app.data() + i;
        std::uint8_t* bits = r.bits.data() + at;
        float* llrs = o.output_llrs ? r.llr.data() + at : nullptr;
        for (int n = 0; n < K; ++n) {
          const Lane v = app[static_cast<std::size_t>(n) * W];
          bits[n] = v < 0 ? 1 : 0;
          if (llrs) llrs[n] = static_cast<float>(v);
        }
      }
    }
    if (o.early_termination && !last && it + 1 >= o.min_iterations) {
      const auto crc = o.crc == BlockCrc::crc24a ? crc24a : crc24b;
      bool all = true;
      for (int i = 0; i < n_lanes; ++i) {
        const BlockDesc& d = plan.blocks[members[i]];
        if (!done_at[i] &&
            crc(std::span<const std::uint8_t>(r.bits.data() + d.bit_offset, d.K)) == 0)
          done_at[i] = it + 1;
        all = all && done_at[i];
      }
      if (all) break;
    }
  }
  for (int i = 0; i < n_lanes; ++i)
    r.iterations[members[i]] = done_at[i] ? done_at[i] : o.iterations;
}

}  // namespace
}  // namespace sigpu::turbo
