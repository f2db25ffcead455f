// Two sub-decoders' state metrics in one 32-bit register, a 16-bit half each, so that one
// instruction advances both (sm_90 adds and takes maxima of 16-bit pairs natively, the add and
// the max fused). The trellis functions of map_decoder.hpp run on it unchanged.
//
// Exact for int8 LLRs: there every metric the decoders compute fits in 16 bits, so the halves
// hold the int32 decoder's values and the results are the CPU's bit for bit. With |Ls| <= 128,
// |La| <= 127 (extrinsics saturate) and |Lp| <= 128 a branch metric is at most G = 383 in
// magnitude. Any state reaches any other in 3 steps, so after a normalisation (state 0
// subtracted, every 8 steps) the metrics lie within 6G = 2298 of 0, and within 2298 + 8G = 5362
// before the next; a backward branch sum adds 128, the extrinsic's alpha + sum stays below
// 10,852 and the difference of two below 21,704 < 2^15. The trellis start's impossible states
// (kNeg16) stay below every reachable metric for the 3 steps they last and never wrap.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::turbo {

struct MetricPair {
  std::uint32_t v = 0;  ///< low half: the first sub-decoder's metric, high half: the second's

  /// The impossible states of the trellis start (the int32 decoders' kNeg): below every metric
  /// of a reachable state by more than the sums they enter (bound above), above -2^15 by more.
  static constexpr std::int32_t kNeg16 = -20000;

  MetricPair() = default;
  /// x in both halves (the generic code's M(0)).
  SIGPU_HD constexpr MetricPair(int x) : v(pack_bits(x, x)) {}

  SIGPU_HD static constexpr std::uint32_t pack_bits(std::int32_t lo, std::int32_t hi) {
    return (static_cast<std::uint32_t>(lo) & 0xFFFFu) | static_cast<std::uint32_t>(hi) << 16;
  }
  SIGPU_HD static MetricPair pack(std::int32_t lo, std::int32_t hi) {
    MetricPair m;
#ifdef __CUDA_ARCH__
    m.v = __byte_perm(static_cast<std::uint32_t>(lo), static_cast<std::uint32_t>(hi), 0x5410);
#else
    m.v = pack_bits(lo, hi);
#endif
    return m;
  }
  SIGPU_HD std::int32_t lo() const {
    return static_cast<std::int16_t>(static_cast<std::uint16_t>(v & 0xFFFFu));
  }
  SIGPU_HD std::int32_t hi() const {
    return static_cast<std::int32_t>(v) >> 16;
  }

  SIGPU_HD friend MetricPair operator+(MetricPair a, MetricPair b) {
    MetricPair r;
#ifdef __CUDA_ARCH__
    asm("add.s16x2 %0, %1, %2;" : "=r"(r.v) : "r"(a.v), "r"(b.v));
#else
    r.v = pack_bits(a.lo() + b.lo(), a.hi() + b.hi());
#endif
    return r;
  }
  /// -b in each half (PTX has no 16-bit pair subtraction): ~b + 1, added per half.
  SIGPU_HD friend MetricPair operator-(MetricPair b) {
    MetricPair ones;
    ones.v = 0x00010001u;
    MetricPair n;
    n.v = ~b.v;
    return n + ones;
  }
  SIGPU_HD friend MetricPair operator-(MetricPair a, MetricPair b) {
    return a + (-b);
  }
  /// The larger in each half (map_decoder.hpp's max_star takes it where a type has one).
  SIGPU_HD static MetricPair max(MetricPair a, MetricPair b) {
    MetricPair r;
#ifdef __CUDA_ARCH__
    asm("max.s16x2 %0, %1, %2;" : "=r"(r.v) : "r"(a.v), "r"(b.v));
#else
    r.v = pack_bits(a.lo() > b.lo() ? a.lo() : b.lo(), a.hi() > b.hi() ? a.hi() : b.hi());
#endif
    return r;
  }
};

}  // namespace sigpu::turbo
