// Subframe decoding (RFC 9639 section 9.2), shared by host and device.
#pragma once

#include <cstdint>

#include "core/bit_reader.hpp"
#include "core/hd.hpp"
#include "flac/errors.hpp"
#include "flac/predict.hpp"
#include "flac/residual.hpp"

namespace sigpu::flac {

/// Reads one sample of `bits` bits (up to 33: the side channel of 32-bit audio).
template <typename S>
SIGPU_HD SIGPU_FORCEINLINE S read_sample(BitReader& br, unsigned bits) {
  return bits <= 32 ? S(br.read_signed(bits)) : S(br.read_signed64(bits));
}

/// What restore_subframe must do to one subframe whose warm-up and residuals are in place.
struct SubframeParams {
  enum Kind : std::uint8_t { verbatim = 0, constant = 1, fixed = 2, lpc = 3 };
  std::int32_t coef[32];            ///< LPC coefficients, `order` of them
  std::int64_t constant_value = 0;  ///< CONSTANT: the value (33 bits for a side channel)
  std::uint8_t kind = verbatim;
  std::uint8_t order = 0;
  std::uint8_t wasted = 0;
  std::uint8_t bits = 0;       ///< sample bits after removing the wasted bits
  std::uint8_t precision = 0;  ///< LPC coefficient precision
  std::int8_t shift = 0;       ///< LPC quantisation shift
};

/// Reads n samples of `bits` bits into out.
template <typename S>
SIGPU_HD void read_samples(BitReader& br, S* out, unsigned n, unsigned bits) {
  for (unsigned i = 0; i < n; ++i) out[i] = read_sample<S>(br, bits);
}

/// How the bulk of a subframe (warm-up and VERBATIM samples, residuals) is read: here by
/// walking it with the subframe's reader; the GPU's warp decoder (flac/cuda/warp_residual.cuh)
/// reads it with the 32 threads of a warp, and leaves the reader after it.
struct SerialBulk {
  template <typename S>
  SIGPU_HD void warmup(BitReader& br, S* out, unsigned n, unsigned bits) const {
    read_samples(br, out, n, bits);
  }
  template <typename S>
  SIGPU_HD FrameError verbatim(BitReader& br, S* out, unsigned n, unsigned bits) const {
    read_samples(br, out, n, bits);
    return FrameError::ok;
  }
  template <typename S>
  SIGPU_HD FrameError residual(BitReader& br, S* out, unsigned n, unsigned order) const {
    return decode_residual(br, out, n, order);
  }
};

/// Reads one subframe of n samples with `bps` bits per sample: warm-up samples and residuals
/// into out[0 .. n), the predictor into p. S is int32_t, or int64_t when a side channel may
/// need 33 bits (or int16_t with a Bulk that checks every value fits, FlatBulk). The GPU's fast
/// path parses every subframe first and restores them later, in parallel; decode_subframe does both
/// at once.
template <typename S, typename Bulk = SerialBulk>
SIGPU_HD FrameError parse_subframe(BitReader& br, S* out, unsigned n, unsigned bps,
                                   SubframeParams& p, const Bulk& bulk = {}) {
  const unsigned header = br.read(8);
  if (header & 0x80) return FrameError::bad_subframe_type;
  const unsigned type = (header >> 1) & 0x3F;
  unsigned wasted = 0;
  if (header & 1) {
    wasted = br.read_unary() + 1;
    if (wasted >= bps) return FrameError::bad_wasted_bits;
  }
  const unsigned bits = bps - wasted;
  p.wasted = static_cast<std::uint8_t>(wasted);
  p.bits = static_cast<std::uint8_t>(bits);
  p.order = 0;

  if (type == 0) {
    p.kind = SubframeParams::constant;
    p.constant_value = read_sample<S>(br, bits);
  } else if (type == 1) {
    p.kind = SubframeParams::verbatim;
    const FrameError e = bulk.verbatim(br, out, n, bits);
    if (e != FrameError::ok) return e;
  } else if ((type >= 8 && type <= 12) || type >= 32) {
    const bool lpc = type >= 32;
    const unsigned order = lpc ? type - 31 : type - 8;
    if (order > n) return FrameError::bad_order;
    bulk.warmup(br, out, order, bits);
    p.kind = lpc ? SubframeParams::lpc : SubframeParams::fixed;
    p.order = static_cast<std::uint8_t>(order);
    if (lpc) {
      const unsigned precision = br.read(4) + 1;
      if (precision == 16) return FrameError::bad_lpc_precision;
      const int shift = br.read_signed(5);
      if (shift < 0) return FrameError::bad_lpc_shift;
      for (unsigned j = 0; j < order; ++j) p.coef[j] = br.read_signed(precision);
      p.precision = static_cast<std::uint8_t>(precision);
      p.shift = static_cast<std::int8_t>(shift);
    }
    const FrameError e = bulk.residual(br, out, n, order);
    if (e != FrameError::ok) return e;
  } else {
    return FrameError::bad_subframe_type;
  }
  if (br.overrun()) return FrameError::truncated;
  return FrameError::ok;
}

/// The predictor and wasted-bits shift of one parsed subframe, in place over x[0 .. n).
template <typename S>
SIGPU_HD void restore_subframe(const SubframeParams& p, S* x, unsigned n) {
  switch (p.kind) {
    case SubframeParams::constant:
      for (unsigned i = 0; i < n; ++i) x[i] = S(p.constant_value);
      break;
    case SubframeParams::fixed:
      restore_fixed(x, n, p.order);
      break;
    case SubframeParams::lpc:
      restore_lpc(x, n, p.coef, p.order, p.shift, p.bits, p.precision);
      break;
    default:
      break;
  }
  if (p.wasted)
    for (unsigned i = 0; i < n; ++i) x[i] = S(static_cast<std::uint64_t>(x[i]) << p.wasted);
}

/// Decodes one subframe of n samples with `bps` bits per sample into out[0 .. n).
template <typename S>
SIGPU_HD FrameError decode_subframe(BitReader& br, S* out, unsigned n, unsigned bps) {
  SubframeParams p;
  const FrameError e = parse_subframe(br, out, n, bps, p);
  if (e == FrameError::ok) restore_subframe(p, out, n);
  return e;
}

}  // namespace sigpu::flac
