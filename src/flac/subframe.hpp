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

/// Decodes one subframe of n samples with `bps` bits per sample into out[0 .. n).
/// S is int32_t, or int64_t when a side channel may need 33 bits.
template <typename S>
SIGPU_HD FrameError decode_subframe(BitReader& br, S* out, unsigned n, unsigned bps) {
  const unsigned header = br.read(8);
  if (header & 0x80) return FrameError::bad_subframe_type;
  const unsigned type = (header >> 1) & 0x3F;
  unsigned wasted = 0;
  if (header & 1) {
    wasted = br.read_unary() + 1;
    if (wasted >= bps) return FrameError::bad_wasted_bits;
  }
  const unsigned bits = bps - wasted;

  if (type == 0) {
    const S v = read_sample<S>(br, bits);
    for (unsigned i = 0; i < n; ++i) out[i] = v;
  } else if (type == 1) {
    for (unsigned i = 0; i < n; ++i) out[i] = read_sample<S>(br, bits);
  } else if ((type >= 8 && type <= 12) || type >= 32) {
    const bool lpc = type >= 32;
    const unsigned order = lpc ? type - 31 : type - 8;
    if (order > n) return FrameError::bad_order;
    for (unsigned i = 0; i < order; ++i) out[i] = read_sample<S>(br, bits);
    std::int32_t coef[32];
    unsigned precision = 0;
    int shift = 0;
    if (lpc) {
      precision = br.read(4) + 1;
      if (precision == 16) return FrameError::bad_lpc_precision;
      shift = br.read_signed(5);
      if (shift < 0) return FrameError::bad_lpc_shift;
      for (unsigned j = 0; j < order; ++j) coef[j] = br.read_signed(precision);
    }
    const FrameError e = decode_residual(br, out, n, order);
    if (e != FrameError::ok) return e;
    if (lpc)
      restore_lpc(out, n, coef, order, shift, bits, precision);
    else
      restore_fixed(out, n, order);
  } else {
    return FrameError::bad_subframe_type;
  }
  if (br.overrun()) return FrameError::truncated;
  if (wasted)
    for (unsigned i = 0; i < n; ++i) out[i] = S(static_cast<std::uint64_t>(out[i]) << wasted);
  return FrameError::ok;
}

}  // namespace sigpu::flac
