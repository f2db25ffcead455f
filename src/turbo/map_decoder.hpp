// The per-sub-block MAP recursion of the parallel turbo decoder, written once for the CPU and
// the GPU (SIGPU_HD). A code block of K bits is split among P sub-decoders; sub-decoder i runs
// the forward (alpha) and backward (beta) recursions over bits [i K / P, (i + 1) K / P) of one
// component code, starting from the boundary state metrics its neighbours wrote in the
// previous iteration (uniform in the first), and writes its extrinsic LLRs and its own
// boundary metrics for the neighbours' next iteration.
//
// Trellis of the 36.212 RSC code (feedback 1 + D^2 + D^3, feedforward 1 + D + D^3): state
// s = r0 << 2 | r1 << 1 | r2 with r0 the newest register bit. Input u gives the feedback bit
// a = u ^ r1 ^ r2, parity p = a ^ r0 ^ r2 and next state a << 2 | r0 << 1 | r1.
// With LLR = log P(0)/P(1) the branch metric of (u, p) is -(u A + p Lp), A = Ls + La.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"

// Full unrolling turns the state loops into straight-line code with the 8 metrics in registers.
#if defined(__CUDA_ARCH__)  // nvcc's device pass
#define TURBO_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)  // nvcc's host pass (its front end rejects GCC's pragma): no hot loops
#define TURBO_UNROLL
#else
#define TURBO_UNROLL _Pragma("GCC unroll 16")
#endif

namespace sigpu::turbo {

/// One code block of a batch, as the decoders see it. Offsets index the batch's arrays.
struct BlockDesc {
  std::int32_t K = 0;
  std::int32_t P = 1;              ///< sub-decoders
  std::uint32_t llr_offset = 0;    ///< first LLR (d0[0]) of the block
  std::uint32_t bit_offset = 0;    ///< first bit in bits / extrinsic arrays (sum of earlier K)
  std::uint32_t perm_offset = 0;   ///< first entry in the pi table (CPU)
  std::int32_t f1 = 0, f2 = 0;     ///< QPP coefficients (the GPU computes pi)
  std::uint32_t sub_offset = 0;    ///< global index of sub-decoder 0
  std::uint32_t bound_offset = 0;  ///< first of the block's P + 1 boundary slots
};

/// Sub-block [begin, end) of sub-decoder i of P over K bits.
SIGPU_HD SIGPU_FORCEINLINE int sub_begin(int K, int P, int i) {
  return static_cast<int>(static_cast<std::int64_t>(i) * K / P);
}

/// pi(k) = (f1 k + f2 k^2) mod K in 32-bit arithmetic (k < K <= 6144, f1, f2 < K).
SIGPU_HD SIGPU_FORCEINLINE int qpp_at(int K, int f1, int f2, int k) {
  return ((f1 + f2 * k) % K) * k % K;
}

/// Index of the block holding global sub-decoder t (blocks sorted by sub_offset).
SIGPU_HD inline int find_block(const BlockDesc* blocks, int n, std::uint32_t t) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (blocks[mid].sub_offset <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

struct FloatTraits {
  using Llr = float;
  using Metric = float;
  static constexpr bool kLogMap = false;  ///< the GPU kernels' algorithm (the CPU's is a parameter)
  static constexpr float kNeg = -1.0e30f;
  SIGPU_HD static SIGPU_FORCEINLINE Llr extrinsic(Metric le, float scale, int /*scale_q4*/) {
#ifdef __CUDA_ARCH__
    return __fmul_rn(le, scale);  // never contracted into an FMA: same bits as the CPU
#else
    return le * scale;
#endif
  }
};

template <typename T>
struct FixedTraits {
  using Llr = T;
  using Metric = std::int32_t;
  static constexpr bool kLogMap = false;
  static constexpr std::int32_t kNeg = -(1 << 24);
  static constexpr std::int32_t kMax = (T(1) << (sizeof(T) * 8 - 2)) * 2 - 1;  // 127 / 32767
  SIGPU_HD static SIGPU_FORCEINLINE Llr extrinsic(Metric le, float /*scale*/, int scale_q4) {
    std::int32_t v = (le * scale_q4) >> 4;  // arithmetic shift: floor
    v = v > kMax ? kMax : (v < -kMax ? -kMax : v);
    return static_cast<Llr>(v);
  }
};

/// Float log-MAP for the GPU kernels, which take the algorithm from their traits.
struct LogMapTraits : FloatTraits {
  static constexpr bool kLogMap = true;
};

/// a * b, rounded, in a form no compiler fuses with a following add into an FMA (which rounds
/// once): the GPU's __fmul_rn never is; on the CPU an empty asm hides the product. Sums of
/// products then round alike on the CPU and the GPU, whatever either compiler's contraction
/// setting and whether the CPU has FMA.
SIGPU_HD SIGPU_FORCEINLINE float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  float p = a * b;
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(p));
#elif defined(__aarch64__)
  __asm__("" : "+w"(p));
#else
  volatile float v = p;
  p = v;
#endif
  return p;
#endif
}

/// m + log(1 + e^-d) for d >= 0: max* of two metrics m = max(a, b), d = |a - b|, with the
/// correction term of log-MAP, within 2e-7 of the exact value. Written out here rather than with
/// the libraries' expf and log1pf, which round differently on the CPU and the GPU, so that
/// log-MAP gives the same bits on both: every step is one IEEE operation rounded to nearest
/// (mul_rn keeps products from being fused). e^-d = 2^-n 2^-f with n = the nearest integer to
/// d log2 e, |f| <= 1/2 (a Taylor polynomial of degree 7); log(1 + t) = 2 atanh(s), s = t / (2 +
/// t) <= 1/3 (its odd series to s^15). Below 2^-24 (d > 16.6) the term is left out.
SIGPU_HD SIGPU_FORCEINLINE float add_log_map_correction(float m, float d) {
  constexpr float kLog2e = 1.44269504f;
  // (-ln 2)^k / k!, k = 0..7
  constexpr float kExp2[8] = {1.0f,           -0.693147182f,   0.240226507f,    -0.0555041097f,
                              0.00961812865f, -0.00133335579f, 0.000154035297f, -1.52527336e-05f};
  // 1 / (2k + 1), k = 0..7
  constexpr float kAtanh[8] = {1.0f,        1.0f / 3.0f,  1.0f / 5.0f,  1.0f / 7.0f,
                               1.0f / 9.0f, 1.0f / 11.0f, 1.0f / 13.0f, 1.0f / 15.0f};
  const float x = mul_rn(d, kLog2e);
  if (!(x < 24.0f)) return m;
  const int n = static_cast<int>(x + 0.5f);
  const float f = x - static_cast<float>(n);  // exact
  float p = kExp2[7];
  TURBO_UNROLL
  for (int k = 6; k >= 0; --k) p = mul_rn(p, f) + kExp2[k];
  // 2^-n from its bits: multiplying by it is exact.
  const std::uint32_t scale_bits = static_cast<std::uint32_t>(127 - n) << 23;
#ifdef __CUDA_ARCH__
  const float t = __fmul_rn(p, __uint_as_float(scale_bits));
  const float s = __fdiv_rn(t, 2.0f + t);
#else
  const float t = p * std::bit_cast<float>(scale_bits);
  const float s = t / (2.0f + t);
#endif
  const float z = mul_rn(s, s);
  float q = kAtanh[7];
  TURBO_UNROLL
  for (int k = 6; k >= 0; --k) q = mul_rn(q, z) + kAtanh[k];
  return mul_rn(2.0f * s, q) + m;
}

template <bool kLogMap, typename M>
SIGPU_HD SIGPU_FORCEINLINE M max_star(M a, M b) {
#ifdef __CUDA_ARCH__
  // fmaxf is one instruction where a > b ? a : b is a compare and a select. For inputs that are
  // not NaN both give the same value (at most the sign of a zero result differs), so the
  // decoders' results stay equal to the CPU's.
  M m;
  if constexpr (std::is_same_v<M, float>)
    m = fmaxf(a, b);
  else if constexpr (requires { M::max(a, b); })
    m = M::max(a, b);
  else
    m = a > b ? a : b;
#else
  M m;
  if constexpr (requires { M::max(a, b); })
    m = M::max(a, b);  // a type holding several metrics (metric_pair.hpp)
  else
    m = a > b ? a : b;
#endif
  if constexpr (kLogMap) {
    static_assert(std::is_same_v<M, float>, "log-MAP runs on float metrics");
    return add_log_map_correction(m, a > b ? a - b : b - a);
  } else {
    return m;
  }
}

/// Plain loads; the GPU's loose mode uses loads that bypass L1 (see cuda/kernels.cuh).
struct PlainLoad {
  template <typename T>
  SIGPU_HD static SIGPU_FORCEINLINE T ld(const T* p) {
    return *p;
  }
};

/// Everything a half-iteration needs, for the whole batch.
template <class Tr>
struct HalfIteration {
  using Llr = typename Tr::Llr;
  using Metric = typename Tr::Metric;
  const BlockDesc* blocks = nullptr;
  const Llr* llr = nullptr;
  const std::uint16_t* pi = nullptr;  ///< CPU: the blocks' interleavers (the GPU computes pi)
  /// c = 0 reads Le2 and writes Le1, c = 1 the other way round; both are kept in the natural
  /// order of the information bits, so component 1 reads and writes them in sequence and only
  /// component 2 goes through the interleaver (a gather for La, a scatter for Le).
  const Llr* ext_in = nullptr;
  Llr* ext_out = nullptr;
  Metric* alpha_bounds = nullptr;  ///< [c][buffer][slot][8]
  Metric* beta_bounds = nullptr;
  std::uint32_t total_bounds = 0;
  int component = 0;
  int read_buf = 0, write_buf = 0;
  float scale = 1.0f;
  int scale_q4 = 16;
  std::uint8_t* bits = nullptr;  ///< set on the last half-iteration (c = 1): hard decisions
  float* llr_out = nullptr;      ///< with bits, on request: a-posteriori LLRs

  /// Strict mode, component c of iteration it: the parity of it picks the boundary buffers
  /// (read the previous iteration's, write the other), c the extrinsic arrays.
  SIGPU_HD void select(int it, int c, Llr* ext1, Llr* ext2) {
    component = c;
    read_buf = it & 1;
    write_buf = read_buf ^ 1;
    ext_in = c == 0 ? ext2 : ext1;
    ext_out = c == 0 ? ext1 : ext2;
  }
};

template <class Tr>
SIGPU_HD SIGPU_FORCEINLINE typename Tr::Metric* bound_slot(typename Tr::Metric* base,
                                                           std::uint32_t total, int c, int buf,
                                                           std::uint32_t slot) {
  return base + ((static_cast<std::size_t>(c) * 2 + buf) * total + slot) * 8;
}

/// Metrics are normalised (state 0 subtracted) only at the sub-block's positions that are
/// multiples of kNormEvery from its start, and at its ends: often enough to keep float precision
/// and int32 range, rarely enough to save most of the subtractions. Every decoder follows the
/// same rule (the GPU's windows start at those positions), so their results stay identical.
inline constexpr int kNormEvery = 8;

/// One trellis step forward: alpha_{k+1} from alpha_k with branch metrics of A, Lp.
template <bool kLogMap, bool kNorm = true, typename M>
SIGPU_HD SIGPU_FORCEINLINE void forward_step(M (&al)[8], M A, M Lp) {
  M na[8];
  TURBO_UNROLL
  for (int n = 0; n < 8; ++n) {
    const int a = n >> 2, r0 = (n >> 1) & 1, r1 = n & 1;
    M v[2];
    TURBO_UNROLL
    for (int r2 = 0; r2 < 2; ++r2) {
      const int s = (r0 << 2) | (r1 << 1) | r2;
      const int u = a ^ r1 ^ r2, p = a ^ r0 ^ r2;
      // A transition without a branch term (u = p = 0) adds nothing: adding a float zero would
      // cost an instruction and could change only the sign of a zero metric.
      if (u | p) {
        M g = 0;
        if (u) g = g - A;
        if (p) g = g - Lp;
        v[r2] = al[s] + g;
      } else {
        v[r2] = al[s];
      }
    }
    na[n] = max_star<kLogMap>(v[0], v[1]);
  }
  const M norm = kNorm ? na[0] : M(0);
  TURBO_UNROLL
  for (int n = 0; n < 8; ++n) al[n] = kNorm ? na[n] - norm : na[n];
}

/// The backward branch sums of one step: t[s][u] = beta_{k+1}(next(s, u)) - p(s, u) Lp. The
/// backward recursion adds -u A to them, the extrinsic adds alpha_k(s): one set serves both.
template <typename M>
SIGPU_HD SIGPU_FORCEINLINE void branch_sums(const M (&be)[8], M Lp, M (&t)[8][2]) {
  TURBO_UNROLL
  for (int s = 0; s < 8; ++s) {
    const int r0 = s >> 2, r1 = (s >> 1) & 1, r2 = s & 1;
    TURBO_UNROLL
    for (int u = 0; u < 2; ++u) {
      const int a = u ^ r1 ^ r2, p = a ^ r0 ^ r2;
      const int n = (a << 2) | (r0 << 1) | r1;
      t[s][u] = p ? be[n] - Lp : be[n];
    }
  }
}

/// beta_k(s) = max*(t[s][0], t[s][1] - A), normalised when kNorm.
template <bool kLogMap, bool kNorm, typename M>
SIGPU_HD SIGPU_FORCEINLINE void beta_from_sums(const M (&t)[8][2], M A, M (&be)[8]) {
  M nb[8];
  TURBO_UNROLL
  for (int s = 0; s < 8; ++s) nb[s] = max_star<kLogMap>(t[s][0], t[s][1] - A);
  const M norm = kNorm ? nb[0] : M(0);
  TURBO_UNROLL
  for (int s = 0; s < 8; ++s) be[s] = kNorm ? nb[s] - norm : nb[s];
}

/// One trellis step backward: beta_k from beta_{k+1}.
template <bool kLogMap, bool kNorm = true, typename M>
SIGPU_HD SIGPU_FORCEINLINE void backward_step(M (&be)[8], M A, M Lp) {
  M t[8][2];
  branch_sums(be, Lp, t);
  beta_from_sums<kLogMap, kNorm>(t, A, be);
}

/// l(0) - l(1) with l(u) = max*_s row(s) + t[s][u]: the extrinsic part of one step.
template <bool kLogMap, typename M, class Row>
SIGPU_HD SIGPU_FORCEINLINE M extrinsic_of_sums(const M (&t)[8][2], const Row& row) {
  M l[2] = {M(0), M(0)};
  TURBO_UNROLL
  for (int s = 0; s < 8; ++s) {
    const M rs = row(s);
    TURBO_UNROLL
    for (int u = 0; u < 2; ++u)
      l[u] = s == 0 ? rs + t[s][u] : max_star<kLogMap>(l[u], rs + t[s][u]);
  }
  return l[0] - l[1];
}

/// One backward step that also returns the a-posteriori difference l(u = 0) - l(u = 1) of the
/// step, l(u) = max*_s alpha_k(s) + t[s][u] with alpha_k(s) = row(s) (the systematic term
/// cancels in the extrinsic). be holds beta_{k+1} on entry and beta_k on return. Shared by
/// every decoder, so the order of the operations - and the float results - are the same
/// everywhere.
template <bool kLogMap, bool kNorm, typename M, class Row>
SIGPU_HD SIGPU_FORCEINLINE M backward_extrinsic(M (&be)[8], const Row& row, M A, M Lp) {
  M t[8][2];
  branch_sums(be, Lp, t);
  const M le = extrinsic_of_sums<kLogMap>(t, row);
  beta_from_sums<kLogMap, kNorm>(t, A, be);
  return le;
}

/// The a-posteriori difference of backward_extrinsic alone, from alpha_k = row(s) and
/// beta_{k+1} = be, which stays as it is: for a decoder that has both at hand (the GPU's
/// two-chain windows). The same sums in the same order, so the same value.
template <bool kLogMap, typename M, class Row>
SIGPU_HD SIGPU_FORCEINLINE M step_extrinsic(const M (&be)[8], const Row& row, M Lp) {
  M t[8][2];
  branch_sums(be, Lp, t);
  return extrinsic_of_sums<kLogMap>(t, row);
}

/// alpha at offset `next` (from the sub-block start, 1..len) from alpha at next - 1.
template <bool kLogMap, typename M>
SIGPU_HD SIGPU_FORCEINLINE void forward_step_to(M (&al)[8], M A, M Lp, int next, int len) {
  if (next % kNormEvery == 0 || next == len)
    forward_step<kLogMap, true>(al, A, Lp);
  else
    forward_step<kLogMap, false>(al, A, Lp);
}
/// backward_extrinsic to beta at offset `at` (0..len - 1) from beta at at + 1.
template <bool kLogMap, typename M, class Row>
SIGPU_HD SIGPU_FORCEINLINE M backward_extrinsic_to(M (&be)[8], const Row& row, M A, M Lp, int at) {
  if (at % kNormEvery == 0) return backward_extrinsic<kLogMap, true>(be, row, A, Lp);
  return backward_extrinsic<kLogMap, false>(be, row, A, Lp);
}

/// beta_K of component c from its three tail steps (trellis ends in state 0 at K + 3).
/// Tail LLRs of component c: x_{K+j} and z_{K+j} are symbols 2j and 2j + 1 of the sequence
/// d0[K+2c], d1[K+2c], d2[K+2c], d0[K+2c+1], d1[K+2c+1], d2[K+2c+1] (36.212 5.1.3.2.2).
/// tail(stream, j) returns d<stream>[K + j].
template <class Tr, bool kLogMap, class Tail>
SIGPU_HD SIGPU_FORCEINLINE void tail_beta_from(const Tail& tail, int c,
                                               typename Tr::Metric (&be)[8]) {
  using M = typename Tr::Metric;
  TURBO_UNROLL
  for (int s = 0; s < 8; ++s) be[s] = s == 0 ? M(0) : M(Tr::kNeg);
  for (int j = 2; j >= 0; --j) {
    const int mx = 2 * j, mz = 2 * j + 1;
    const M x = static_cast<M>(tail(mx % 3, 2 * c + mx / 3));
    const M z = static_cast<M>(tail(mz % 3, 2 * c + mz / 3));
    backward_step<kLogMap>(be, x, z);
  }
}
/// The same from a block's LLRs d0 | d1 | d2.
template <class Tr, bool kLogMap>
SIGPU_HD inline void tail_beta(const typename Tr::Llr* llr, int K, int c,
                               typename Tr::Metric (&be)[8]) {
  tail_beta_from<Tr, kLogMap>([&](int stream, int j) { return llr[stream * (K + 4) + K + j]; }, c,
                              be);
}

/// Hard decision (and on request, llr_out not null, the LLR) of one information bit from its
/// a-posteriori LLR.
template <typename M>
SIGPU_HD SIGPU_FORCEINLINE void write_decision(std::uint8_t* bits, float* llr_out, std::uint32_t at,
                                               M app) {
  bits[at] = app < M(0) ? 1 : 0;
  if (llr_out) llr_out[at] = static_cast<float>(app);
}

/// Sub-decoder i of block b for one half-iteration. alpha: scratch of 8 (end - begin) metrics.
template <class Tr, bool kLogMap, class Load = PlainLoad>
SIGPU_HD inline void decode_subblock(const HalfIteration<Tr>& h, const BlockDesc& b, int i,
                                     typename Tr::Metric* alpha) {
  using M = typename Tr::Metric;
  using Llr = typename Tr::Llr;
  const int K = b.K, P = b.P, c = h.component;
  const int begin = sub_begin(K, P, i), end = sub_begin(K, P, i + 1);
  const Llr* sys = h.llr + b.llr_offset;
  const Llr* par = sys + static_cast<std::size_t>(K + 4) * (1 + c);
  const std::uint16_t* pi = h.pi + b.perm_offset;
  const Llr* ext_in = h.ext_in + b.bit_offset;
  Llr* ext_out = h.ext_out + b.bit_offset;

  // The information bit at step k of this component's trellis.
  auto bit_at = [&](int k) -> int { return c == 0 ? k : pi[k]; };
  // A = Ls + La of that bit.
  auto a_at = [&](int k) -> M {
    const int n = bit_at(k);
    return static_cast<M>(sys[n]) + static_cast<M>(Load::ld(ext_in + n));
  };

  M al[8], be[8];
  if (i == 0) {
    TURBO_UNROLL
    for (int s = 0; s < 8; ++s) al[s] = s == 0 ? M(0) : M(Tr::kNeg);
  } else {
    const M* src =
        bound_slot<Tr>(h.alpha_bounds, h.total_bounds, c, h.read_buf, b.bound_offset + i);
    TURBO_UNROLL
    for (int s = 0; s < 8; ++s) al[s] = Load::ld(src + s);
  }
  if (i == P - 1) {
    tail_beta<Tr, kLogMap>(sys, K, c, be);
  } else {
    const M* src =
        bound_slot<Tr>(h.beta_bounds, h.total_bounds, c, h.read_buf, b.bound_offset + i + 1);
    TURBO_UNROLL
    for (int s = 0; s < 8; ++s) be[s] = Load::ld(src + s);
  }

  const int len = end - begin;
  for (int k = begin; k < end; ++k) {
    M* row = alpha + static_cast<std::size_t>(k - begin) * 8;
    TURBO_UNROLL
    for (int s = 0; s < 8; ++s) row[s] = al[s];
    forward_step_to<kLogMap>(al, a_at(k), static_cast<M>(par[k]), k - begin + 1, len);
  }
  if (i < P - 1) {
    M* dst = bound_slot<Tr>(h.alpha_bounds, h.total_bounds, c, h.write_buf, b.bound_offset + i + 1);
    TURBO_UNROLL
    for (int s = 0; s < 8; ++s) dst[s] = al[s];
  }

  for (int k = end - 1; k >= begin; --k) {
    const M* row = alpha + static_cast<std::size_t>(k - begin) * 8;
    const M A = a_at(k), Lp = static_cast<M>(par[k]);
    const M le = backward_extrinsic_to<kLogMap>(
        be, [&](int s) { return row[s]; }, A, Lp, k - begin);
    const int n = bit_at(k);
    ext_out[n] = Tr::extrinsic(le, h.scale, h.scale_q4);
    if (h.bits) write_decision(h.bits, h.llr_out, b.bit_offset + n, A + le);
  }
  if (i > 0) {
    M* dst = bound_slot<Tr>(h.beta_bounds, h.total_bounds, c, h.write_buf, b.bound_offset + i);
    TURBO_UNROLL
    for (int s = 0; s < 8; ++s) dst[s] = be[s];
  }
}

}  // namespace sigpu::turbo
