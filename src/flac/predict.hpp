// Restoring samples from residuals: FIXED and LPC predictors, in place.
// out[0 .. order) holds the warm-up samples and out[order .. n) the residuals.
#pragma once

#include <cstdint>
#include <utility>

#include "core/hd.hpp"

namespace sigpu::flac {

/// Arithmetic on the predictors wraps (unsigned, so defined): a valid stream's exact values
/// always fit, and a hostile one gets the same wrapped values on every backend.
using Wrap = std::uint64_t;

template <typename S>
SIGPU_HD SIGPU_FORCEINLINE S from_wrap(Wrap v) {
  return S(static_cast<std::int64_t>(v));
}

template <typename S>
SIGPU_HD void restore_fixed(S* x, unsigned n, unsigned order) {
  auto w = [&](unsigned i) { return static_cast<Wrap>(static_cast<std::int64_t>(x[i])); };
  switch (order) {
    case 1:
      for (unsigned i = 1; i < n; ++i) x[i] = from_wrap<S>(w(i) + w(i - 1));
      break;
    case 2:
      for (unsigned i = 2; i < n; ++i) x[i] = from_wrap<S>(w(i) + 2 * w(i - 1) - w(i - 2));
      break;
    case 3:
      for (unsigned i = 3; i < n; ++i)
        x[i] = from_wrap<S>(w(i) + 3 * (w(i - 1) - w(i - 2)) + w(i - 3));
      break;
    case 4:
      for (unsigned i = 4; i < n; ++i)
        x[i] = from_wrap<S>(w(i) + 4 * (w(i - 1) + w(i - 3)) - 6 * w(i - 2) - w(i - 4));
      break;
    default:
      break;
  }
}

SIGPU_HD inline unsigned floor_log2(unsigned v) {
  unsigned r = 0;
  while (v >>= 1) ++r;
  return r;
}

/// The 32-bit prediction with the order known at compile time: the compiler unrolls the dot
/// product and keeps the coefficients and the last Order samples in registers, one load and one
/// store per sample (the variable-order loop runs several times slower, on CPU and GPU).
template <unsigned Order, typename S>
SIGPU_HD void restore_lpc32(S* x, unsigned n, const std::int32_t* coef_in, int shift) {
  std::uint32_t coef[Order];
  std::uint32_t past[Order];  ///< past[j] = x[i - 1 - j]
  for (unsigned j = 0; j < Order; ++j) {
    coef[j] = static_cast<std::uint32_t>(coef_in[j]);
    past[j] = static_cast<std::uint32_t>(x[Order - 1 - j]);
  }
  for (unsigned i = Order; i < n; ++i) {
    std::uint32_t sum = 0;  // the newest sample's term last: the others are ready before it
    for (unsigned j = Order; j-- > 0;) sum += coef[j] * past[j];
    const S v =
        from_wrap<S>(static_cast<Wrap>(std::int64_t(x[i])) +
                     static_cast<Wrap>(std::int64_t(static_cast<std::int32_t>(sum) >> shift)));
    x[i] = v;
    for (unsigned j = Order - 1; j > 0; --j) past[j] = past[j - 1];
    past[0] = static_cast<std::uint32_t>(v);
  }
}

template <typename S, unsigned... Orders>
SIGPU_HD bool restore_lpc32_dispatch(S* x, unsigned n, const std::int32_t* coef, unsigned order,
                                     int shift, std::integer_sequence<unsigned, Orders...>) {
  return ((order == Orders + 1 ? (restore_lpc32<Orders + 1>(x, n, coef, shift), true) : false) ||
          ...);
}

/// The prediction with 64-bit sums, for any order.
template <typename S>
SIGPU_HD void restore_lpc64(S* x, unsigned n, const std::int32_t* coef, unsigned order, int shift) {
  for (unsigned i = order; i < n; ++i) {
    Wrap sum = 0;
    for (unsigned j = 0; j < order; ++j)
      sum +=
          static_cast<Wrap>(std::int64_t(coef[j])) * static_cast<Wrap>(std::int64_t(x[i - 1 - j]));
    x[i] = from_wrap<S>(static_cast<Wrap>(std::int64_t(x[i])) +
                        static_cast<Wrap>(static_cast<std::int64_t>(sum) >> shift));
  }
}

/// Whether restore_lpc may sum in 32 bits.
SIGPU_HD inline bool lpc_fits_32(unsigned sample_bits, unsigned precision, unsigned order) {
  return sample_bits + precision + floor_log2(order) <= 32;
}

/// sample_bits is the subframe's sample size. When it, the coefficient precision and the
/// order guarantee that every sum fits in 32 bits, the sum is accumulated in 32 bits (as
/// libFLAC does); otherwise in 64. Both give the exact sum for a valid stream; for a hostile one
/// the 32-bit sum wraps (unsigned, so defined), identically on every backend.
template <typename S>
SIGPU_HD void restore_lpc(S* x, unsigned n, const std::int32_t* coef, unsigned order, int shift,
                          unsigned sample_bits, unsigned precision) {
  if (lpc_fits_32(sample_bits, precision, order))
    restore_lpc32_dispatch(x, n, coef, order, shift, std::make_integer_sequence<unsigned, 32>{});
  else
    restore_lpc64(x, n, coef, order, shift);
}

}  // namespace sigpu::flac
