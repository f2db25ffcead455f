// Inter-frame SIMD decoding (interframe.hpp). Each group holds up to one vector's lanes of code
// blocks of the same K; their LLRs are laid out lane-interleaved (position n of every block in
// one vector). Each half-iteration runs the forward recursion over the whole block, keeping
// alpha at the start of every window, then the backward recursion with the extrinsics window by
// window, each window's alpha computed again from its checkpoint: the scalar sub-decoder's work
// for P = 1 (map_decoder.hpp has the trellis), with the block's alpha never leaving L1. The
// arithmetic is exact integer arithmetic in either
// lane width, so where the scalar decoder normalises its metrics does not change a result: the
// extrinsics and decisions are differences in which any offset common to the 8 states cancels.
// 16-bit lanes hold int8 LLRs' metrics without overflow: a step changes a metric by at most
// |A| + |Lp| <= 383, the 8 states stay within three steps' worth of each other, and the metrics
// are renormalised every 8 steps.
#include "turbo/interframe.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

namespace sigpu::turbo {
namespace {

/// The groups of a batch: block indices ordered by K, cut into runs of at most `lanes` blocks
/// of one K.
std::vector<std::vector<int>> make_groups(const BatchPlan& plan, int lanes) {
  std::vector<int> order(plan.blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return plan.blocks[a].K < plan.blocks[b].K; });
  std::vector<std::vector<int>> groups;
  for (int b : order) {
    if (groups.empty() || static_cast<int>(groups.back().size()) == lanes ||
        plan.blocks[groups.back().front()].K != plan.blocks[b].K)
      groups.emplace_back();
    groups.back().push_back(b);
  }
  return groups;
}

}  // namespace
}  // namespace sigpu::turbo

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

// Only this file's own functions below are built for AVX2 (the headers above are not): the
// entry points call them after asking the CPU.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

namespace sigpu::turbo {
namespace {

/// 16 lanes of 16 bits: the metrics of int8 LLRs.
struct Lanes16 {
  using Llr = std::int8_t;
  using Lane = std::int16_t;
  static constexpr int kLanes = 16;
  static constexpr int kNeg = -8192;  // an unreachable state: loses every max to a reachable one
  static constexpr int kMax = 127;
  static __m256i set1(int x) { return _mm256_set1_epi16(static_cast<short>(x)); }
  static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi16(a, b); }
  static __m256i sub(__m256i a, __m256i b) { return _mm256_sub_epi16(a, b); }
  static __m256i max(__m256i a, __m256i b) { return _mm256_max_epi16(a, b); }
  /// The LLRs and extrinsics (within int8) widened from / narrowed to their own width.
  static __m256i widen(const Llr* p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void narrow(Llr* p, __m256i x) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packs_epi16(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)));
  }
  /// FixedTraits::extrinsic: (le * q) >> 4, clamped to +-127, in 32 bits.
  static __m256i extrinsic(__m256i le, int q) {
    const __m256i qq = _mm256_set1_epi32(q);
    const __m256i lo = _mm256_srai_epi32(
        _mm256_mullo_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(le)), qq), 4);
    const __m256i hi = _mm256_srai_epi32(
        _mm256_mullo_epi32(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(le, 1)), qq), 4);
    const __m256i v = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
    return _mm256_max_epi16(_mm256_min_epi16(v, set1(kMax)), set1(-kMax));
  }
};

/// 8 lanes of 32 bits: the metrics of int16 LLRs, the scalar decoder's own width.
struct Lanes32 {
  using Llr = std::int16_t;
  using Lane = std::int32_t;
  static constexpr int kLanes = 8;
  static constexpr int kNeg = -(1 << 24);
  static constexpr int kMax = 32767;
  static __m256i set1(int x) { return _mm256_set1_epi32(x); }
  static __m256i add(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
  static __m256i sub(__m256i a, __m256i b) { return _mm256_sub_epi32(a, b); }
  static __m256i max(__m256i a, __m256i b) { return _mm256_max_epi32(a, b); }
  static __m256i widen(const Llr* p) {
    return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void narrow(Llr* p, __m256i x) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)));
  }
  static __m256i extrinsic(__m256i le, int q) {
    const __m256i v = _mm256_srai_epi32(_mm256_mullo_epi32(le, _mm256_set1_epi32(q)), 4);
    return _mm256_max_epi32(_mm256_min_epi32(v, set1(kMax)), set1(-kMax));
  }
};

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

/// Branch metric -(u A + p Lp) of (u, p), from the step's -A, -Lp and -(A + Lp).
struct Branch {
  __m256i none, a, lp, both;
  __m256i of(int u, int p) const { return u ? (p ? both : a) : (p ? lp : none); }
};
template <class L>
[[gnu::always_inline]] inline Branch branch(__m256i A, __m256i Lp) {
  const __m256i z = _mm256_setzero_si256();
  const __m256i na = L::sub(z, A);
  return {z, na, L::sub(z, Lp), L::sub(na, Lp)};
}

template <class L>
[[gnu::always_inline]] inline void normalise(__m256i (&m)[8]) {
  const __m256i m0 = m[0];
  for (int s = 0; s < 8; ++s) m[s] = L::sub(m[s], m0);
}

/// alpha_{k+1} from alpha_k: next state n = a r0 r1 has the predecessors r0 r1 r2, so states
/// r0 r1 0 and r0 r1 1 feed exactly the pair 0 r0 r1 and 1 r0 r1. Taken pair by pair, each
/// alpha is dead once its pair is done, and the 8 new metrics fit in the registers it frees.
template <class L>
[[gnu::always_inline]] inline void forward(__m256i (&al)[8], const Branch& g) {
  __m256i na[8];
  for (int j = 0; j < 4; ++j)
    for (int a = 0; a < 2; ++a) {
      const int n = a << 2 | j, r0 = j >> 1, r1 = j & 1;
      __m256i v[2];
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
[[gnu::always_inline]] inline __m256i backward(__m256i (&be)[8], const __m256i* alpha, __m256i A,
                                               __m256i Lp) {
  __m256i nb[8], l0 = _mm256_setzero_si256(), l1 = l0;
  for (int s = 0; s < 8; ++s) {
    const __m256i b0 = be[next_state(s, 0)], b1 = be[next_state(s, 1)];
    const __m256i t0 = parity(s, 0) ? L::sub(b0, Lp) : b0;
    const __m256i t1 = parity(s, 1) ? L::sub(b1, Lp) : b1;
    if constexpr (kExtrinsic) {
      const __m256i a = _mm256_loadu_si256(alpha + s);
      l0 = s ? L::max(l0, L::add(a, t0)) : L::add(a, t0);
      l1 = s ? L::max(l1, L::add(a, t1)) : L::add(a, t1);
    }
    nb[s] = L::max(t0, L::sub(t1, A));
  }
  for (int s = 0; s < 8; ++s) be[s] = nb[s];
  return L::sub(l0, l1);
}

/// Steps per window of the backward pass (a multiple of the normalisation's 8).
constexpr int kWindow = 32;

/// The lane-interleaved working arrays of one group (Lane values, kLanes per position).
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
  __m256i at(const std::vector<typename L::Lane>& v, std::size_t pos) const {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v.data() + pos * L::kLanes));
  }
  __m256i llr_at(const std::vector<typename L::Llr>& v, std::size_t pos) const {
    return L::widen(v.data() + pos * L::kLanes);
  }
  void put_llr(std::vector<typename L::Llr>& v, std::size_t pos, __m256i x) {
    L::narrow(v.data() + pos * L::kLanes, x);
  }
  void put(std::vector<typename L::Lane>& v, std::size_t pos, __m256i x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(v.data() + pos * L::kLanes), x);
  }
};

/// Decodes the blocks `members` (one K) of plan, their LLRs lane by lane, as decode_cpu does.
template <class L>
void decode_group(const BatchPlan& plan, const typename L::Llr* llr,
                  const std::vector<int>& members, const DecoderOptions& o, DecodeResult& r) {
  using Lane = typename L::Lane;
  constexpr int W = L::kLanes;
  const int n_lanes = static_cast<int>(members.size());
  const BlockDesc& first = plan.blocks[members.front()];
  const int K = first.K;
  const std::uint16_t* pi = plan.pi.data() + first.perm_offset;
  thread_local Group<L> g;
  for (auto& d : g.d) d.assign(static_cast<std::size_t>(K + 4) * W, 0);
  for (auto& e : g.ext) e.assign(static_cast<std::size_t>(K) * W, 0);
  g.ckpt.resize(static_cast<std::size_t>((K + kWindow - 1) / kWindow) * 8 * W);
  g.alpha.resize(static_cast<std::size_t>(kWindow) * 8 * W);
  g.a.resize(static_cast<std::size_t>(kWindow) * W);
  g.app.resize(static_cast<std::size_t>(K) * W);
  for (int i = 0; i < n_lanes; ++i) {
    const typename L::Llr* src = llr + plan.blocks[members[i]].llr_offset;
    for (int s = 0; s < 3; ++s)
      for (int n = 0; n < K + 4; ++n)
        g.d[s][static_cast<std::size_t>(n) * W + i] =
            src[static_cast<std::size_t>(s) * (K + 4) + n];
  }
  const int q = scale_q4(o.scaling);
  std::vector<int> done_at(n_lanes, 0);

  for (int it = 0; it < o.iterations; ++it) {
    const bool last = it == o.iterations - 1;
    for (int c = 0; c < 2; ++c) {
      const bool decide = c == 1 && (last || (o.early_termination && it + 1 >= o.min_iterations));
      const auto& ext_in = g.ext[c == 0 ? 1 : 0];
      auto& ext_out = g.ext[c == 0 ? 0 : 1];
      const auto& par = g.d[1 + c];
      auto bit_at = [&](int k) { return c == 0 ? k : static_cast<int>(pi[k]); };
      auto a_at = [&](int k) {
        const int n = bit_at(k);
        return L::add(g.llr_at(g.d[0], n), g.llr_at(ext_in, n));
      };
      // Forward over the block keeping alpha only at the windows' starts.
      __m256i al[8], be[8];
      for (int s = 0; s < 8; ++s) al[s] = L::set1(s == 0 ? 0 : L::kNeg);
      for (int k = 0; k < K; ++k) {
        if (k % kWindow == 0)
          for (int s = 0; s < 8; ++s)
            g.put(g.ckpt, static_cast<std::size_t>(k / kWindow) * 8 + s, al[s]);
        forward<L>(al, branch<L>(a_at(k), g.llr_at(par, k)));
        if ((k + 1) % 8 == 0) normalise<L>(al);
      }
      // beta at K from the three tail steps of component c (tail_beta_from's order).
      for (int s = 0; s < 8; ++s) be[s] = L::set1(s == 0 ? 0 : L::kNeg);
      for (int j = 2; j >= 0; --j) {
        const int mx = 2 * j, mz = 2 * j + 1;
        backward<L, false>(be, nullptr, g.llr_at(g.d[mx % 3], K + 2 * c + mx / 3),
                           g.llr_at(g.d[mz % 3], K + 2 * c + mz / 3));
      }
      // Backward window by window from the last: each window's alpha again from its
      // checkpoint (the same steps, so the same values) into a buffer that stays in L1.
      auto backward_pass = [&](auto deciding) {
        for (int k0 = (K - 1) / kWindow * kWindow; k0 >= 0; k0 -= kWindow) {
          const int k1 = std::min(K, k0 + kWindow);
          for (int s = 0; s < 8; ++s)
            al[s] = g.at(g.ckpt, static_cast<std::size_t>(k0 / kWindow) * 8 + s);
          for (int k = k0; k < k1; ++k) {
            const __m256i A = a_at(k);
            g.put(g.a, k - k0, A);
            for (int s = 0; s < 8; ++s)
              g.put(g.alpha, static_cast<std::size_t>(k - k0) * 8 + s, al[s]);
            forward<L>(al, branch<L>(A, g.llr_at(par, k)));
            if ((k + 1) % 8 == 0) normalise<L>(al);
          }
          for (int k = k1 - 1; k >= k0; --k) {
            const __m256i A = g.at(g.a, k - k0);
            const auto* alpha = reinterpret_cast<const __m256i*>(
                g.alpha.data() + static_cast<std::size_t>(k - k0) * 8 * W);
            const __m256i le = backward<L, true>(be, alpha, A, g.llr_at(par, k));
            if (k % 8 == 0) normalise<L>(be);
            const int n = bit_at(k);
            g.put_llr(ext_out, n, L::extrinsic(le, q));
            if constexpr (decltype(deciding)::value) g.put(g.app, n, L::add(A, le));
          }
        }
      };
      if (decide) {
        backward_pass(std::true_type{});
        // Each lane's decisions (and LLRs) into its block, unless it stopped earlier.
        for (int i = 0; i < n_lanes; ++i) {
          if (done_at[i]) continue;
          const std::size_t at = plan.blocks[members[i]].bit_offset;
          for (int n = 0; n < K; ++n) {
            const Lane v = g.app[static_cast<std::size_t>(n) * W + i];
            r.bits[at + n] = v < 0 ? 1 : 0;
            if (o.output_llrs) r.llr[at + n] = static_cast<float>(v);
          }
        }
      } else {
        backward_pass(std::false_type{});
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

template <class L>
void decode_avx2(const BatchPlan& plan, const typename L::Llr* llr, const DecoderOptions& o,
                 ThreadPool* pool, DecodeResult& r) {
  const auto groups = make_groups(plan, L::kLanes);
  auto work = [&](std::size_t first, std::size_t end) {
    for (std::size_t i = first; i < end; ++i) decode_group<L>(plan, llr, groups[i], o, r);
  };
  if (pool)
    pool->parallel_for(groups.size(), work, 1);
  else
    work(0, groups.size());
}

}  // namespace
}  // namespace sigpu::turbo

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace sigpu::turbo {

bool decode_interframe(const BatchPlan& plan, const std::int8_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r) {
  if (!__builtin_cpu_supports("avx2")) return false;
  decode_avx2<Lanes16>(plan, llr, o, pool, r);
  return true;
}
bool decode_interframe(const BatchPlan& plan, const std::int16_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r) {
  if (!__builtin_cpu_supports("avx2")) return false;
  decode_avx2<Lanes32>(plan, llr, o, pool, r);
  return true;
}

}  // namespace sigpu::turbo

#else

namespace sigpu::turbo {
bool decode_interframe(const BatchPlan&, const std::int8_t*, const DecoderOptions&, ThreadPool*,
                       DecodeResult&) {
  return false;
}
bool decode_interframe(const BatchPlan&, const std::int16_t*, const DecoderOptions&, ThreadPool*,
                       DecodeResult&) {
  return false;
}
}  // namespace sigpu::turbo

#endif
